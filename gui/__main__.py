"""`python -m kbert_gui`: the desktop app (as `kbert gui`)."""

import sys

from kbert_gui.app import main

sys.exit(main())
