"""Runs compared: every fine-tuning run under a folder (task, model, data, settings, best
score, time, status), the selected runs' evaluation curves on one chart, and "use this
run's setup" / "open its model".

`RunsView` is the widget; `run_summary` reads a run folder (kbert's model metadata and
search table, the app's record of the run), `RunsTableModel` lists the runs and
`RunCurvesChart` draws their curves. Imports `widgets`, `services`, `tab_key` and the
fine-tuning tab's record and texts, never the window.
"""
