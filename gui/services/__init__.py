"""What every tab of the app uses and no tab owns: the shared `AppContext`, the model
store and its opener, worker threads and latest-only requests, the UI-thread garbage
collector, file dialogs and export writers.

Imports PySide6 (no widgets of its own), kbert, `kbert_gui.tab_key` and the app's
`DEFAULT_PRESET`; never `kbert_gui.widgets`, a tab or the window.
"""
