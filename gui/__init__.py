"""kbert's desktop app (PySide6), installed as `kbert_gui`.

The app sits on top of kbert's public API only: views, Qt item models and worker
threads here, no model math. `kbert_gui.app.main` starts it (`kbert gui`, `kbert-gui`).

What it holds, and what each part may import (`tests/gui/test_gui_architecture.py`
checks it from the source):

- `masked_words`, `question_answering`, `classify`, `fine_tuning`: one package per
  tab, each a panel (widgets), a controller (behaviour) and a format module (texts).
  A tab imports `widgets`, `services` and `tab_key`, never another tab (the
  fine-tuning tab also opens `evaluation`'s browser).
- `evaluation`: the evaluation browser (every example of a labelled file with the
  model's prediction), opened from File > Evaluate… and from a finished fine-tuning run;
  imports `widgets` and `services`.
- `window`: the main window, its menus and dialogs; may import the tabs.
- `widgets`: what every tab shows alike (banners, tables, delegates, `style`); imports
  nothing else of the app.
- `services`: what every tab uses and no tab owns (the model store, workers, the
  garbage collector, exports, file dialogs); imports no widget, tab or window.
- `tab_key`: the name of each tab (`TabKey`), for every part.
- `app`: the entry point, which puts the window and the tabs together.
"""

# The model the app opens when none is named: the bundled demo preset.
DEFAULT_PRESET = "demo"
# The bundled task model a tab offers when the open model has no head for it.
BUNDLED_CLASSIFIER = "demo-spam"
# How a warning's link names a model to open: `<a href="model:demo-spam">`.
MODEL_LINK_PREFIX = "model:"
# How a warning's link asks for a fine-tuning task: `<a href="fine-tune:qa">` shows the
# fine-tuning tab set to that task (a kbert task name).
FINE_TUNING_LINK_PREFIX = "fine-tune:"
