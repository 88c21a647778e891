"""kbert's desktop app (PySide6).

The app sits on top of kbert's public API only: views, Qt item models and worker threads
here, no model math. `kbert_gui.app.main` starts it (`kbert gui`, `kbert-gui`).
"""

# The model the app opens when none is named: the bundled demo preset.
DEFAULT_PRESET = "demo"
