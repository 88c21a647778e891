"""The "Fine-tuning" tab: the data with its preview and validation, the settings, a run
with its live view (progress, curves, probe, log), cancel and resume, the result.

`FineTuningTab` is a `FineTuningPanel` (widgets) driven by a
`FineTuningSetupController` (the form), a `FineTuningRunController` (the run's
lifecycle) and its `FineTuningRunView` (what the run shows); the texts are
`fine_tuning_format`'s, the run itself a `FineTuningJob` on the training thread.
Imports `widgets`, `services` and `tab_key`, never another tab or the window.
"""
