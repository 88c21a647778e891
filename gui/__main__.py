"""`python -m gui`: the desktop app (as `kbert gui`)."""

import sys

from gui.app import main

sys.exit(main())
