"""The fine-tuning tab's setup: the task, the data files and their preview, the run folder."""

import datetime
import itertools
import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import QTimer
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot

from kbert_gui.fine_tuning.fine_tuning_format import NO_TRAINING_FILE
from kbert_gui.fine_tuning.fine_tuning_format import curve_names
from kbert_gui.fine_tuning.fine_tuning_format import error_lines
from kbert_gui.fine_tuning.fine_tuning_format import preview_problems
from kbert_gui.fine_tuning.fine_tuning_format import preview_summary
from kbert_gui.fine_tuning.fine_tuning_format import probe_suggestion
from kbert_gui.fine_tuning.fine_tuning_job import MASKED_LM
from kbert_gui.fine_tuning.fine_tuning_tasks import DATA_HELP
from kbert_gui.fine_tuning.fine_tuning_tasks import OPEN_TAB
from kbert_gui.fine_tuning.fine_tuning_tasks import TASKS
from kbert_gui.fine_tuning.hyperparameter_form import describe_config
from kbert_gui.fine_tuning.start_problem import folder_beside
from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.fine_tuning.training_data_preview import DATA_KINDS
from kbert_gui.fine_tuning.training_data_preview import TrainingDataPreview

RUN_FOLDER = pathlib.Path.home() / "kbert-runs"


class FineTuningSetupController(QObject):
    """Drives the setup column and the Data page of a `FineTuningPanel`.

    The task decides the data kind, the column form, the probe fields and the default
    run folder (`RUN_FOLDER`, until the user picks one). Each kind of data keeps its
    own files: switching to a task that reads other files shows that kind's (none at
    first), and switching back brings the earlier ones back. The files preview
    through a `LatestRequestRunner` on the inference pool: rows the reader rejects
    are marked, and the first example fills the probe. The hyperparameter form gets
    kbert's defaults and documentation from a worker. `FineTuningRunController`
    reads the setup and locks it during a run.

    Signals:
        preview_loaded(): a data preview (and its validation) is shown.
        hyperparameters_ready(): the hyperparameter form has its defaults.
        setup_changed(): the task, a file, the column mapping or the run folder
            changed (what a resumable run is compared with).

    Args:
        panel: the `FineTuningPanel` (also the parent).
        context: the `AppContext`.
    """

    preview_loaded = Signal()
    hyperparameters_ready = Signal()
    setup_changed = Signal()

    def __init__(self, panel, context):
        super().__init__(panel)
        self.panel = panel
        self.context = context
        self.preview = None
        self._locked = False
        self._output_is_default = True
        self._data_kind = None
        self._task = None
        # data kind: (training file, evaluation file) chosen for it
        self._files_by_kind = {}
        self._preview_runner = LatestRequestRunner(
            context.inference_pool, delay_ms=150, parent=self
        )
        self._preview_runner.result.connect(self._show_previews)
        self._preview_runner.error.connect(self._show_preview_error)

        panel.task_box.currentIndexChanged.connect(self._task_chosen)
        panel.train_browse_button.clicked.connect(self._browse_training_file)
        panel.eval_browse_button.clicked.connect(self._browse_evaluation_file)
        panel.train_file_edit.editingFinished.connect(self._files_changed)
        panel.eval_file_edit.editingFinished.connect(self._files_changed)
        panel.eval_file_edit.textChanged.connect(self._update_patience)
        panel.column_form.mapping_changed.connect(self._request_preview)
        panel.column_form.mapping_changed.connect(self.setup_changed)
        panel.column_form.header_changed.connect(self._request_preview)
        panel.choice_form.mapping_changed.connect(self._request_preview)
        panel.choice_form.mapping_changed.connect(self.setup_changed)
        panel.output_browse_button.clicked.connect(self._browse_output_folder)
        panel.output_edit.textEdited.connect(self._output_edited)
        panel.output_edit.textChanged.connect(self.setup_changed)

        context.models.source_changed.connect(self._show_source)
        context.fine_tuning_requested.connect(self._task_requested)
        # The device count comes with the environment, read off the UI thread once
        # Keras has loaded (counting devices imports the backend).
        context.environment_ready.connect(self._show_devices)
        if context.environment is not None:
            self._show_devices()
        self._show_source(context.models.source)
        self.set_task("classification")
        # Keras-free and quick (kbert's config dataclass and its fields' help), so filled in
        # on the UI thread as soon as the tab is wired up, not by a worker that waits in
        # the inference queue behind a model load.
        QTimer.singleShot(0, self, lambda: self._set_config_description(describe_config()))

    def task(self):
        """The chosen task name ("classification", ..., "masked-lm")."""
        return self.panel.task_box.currentData()

    def set_task(self, task_name):
        """Chooses the task by name."""
        index = self.panel.task_box.findData(task_name)
        if index < 0:
            raise ValueError(f"Unknown task {task_name!r}; the tasks are {list(TASKS)}.")
        if index == self.panel.task_box.currentIndex():
            self._task_chosen()
        else:
            self.panel.task_box.setCurrentIndex(index)

    @Slot(str)
    def _task_requested(self, task_name):
        # Another tab's link ("fine-tune this model for question answering"); a run
        # in progress keeps its form.
        if not self._locked and task_name in TASKS:
            self.set_task(task_name)

    def _task_chosen(self):
        panel = self.panel
        task = self.task()
        kind = DATA_KINDS[task]
        if self._data_kind not in (None, kind):
            # Another kind of file: the previous ones wait for their kind to come back.
            self._files_by_kind[self._data_kind] = (
                panel.train_file_edit.text(),
                panel.eval_file_edit.text(),
            )
            train, evaluation = self._files_by_kind.get(kind, ("", ""))
            panel.train_file_edit.setText(train)
            panel.eval_file_edit.setText(evaluation)
            panel.error_banner.clear_error()
        if self._task not in (None, task):
            # The probe's earlier outputs belong to another task's model.
            panel.probe_list.clear()
        self._task = task
        self._data_kind = kind
        panel.column_form.setVisible(kind == "table")
        panel.column_form.set_pair_visible(task == "pair-classification")
        panel.choice_form.setVisible(kind == "choices")
        panel.data_help.setText(DATA_HELP[kind])
        panel.probe_input.set_task(task)
        if panel.chart.is_empty():
            # Curves shown keep the names of the run they belong to.
            panel.chart.set_names(*curve_names(task))
        # "Open in …" is for the model a run saves, of the task shown.
        panel.set_open_target(OPEN_TAB[task])
        panel.open_model_button.setEnabled(False)
        if self._output_is_default:
            self._set_default_output()
        self._update_patience()
        self._files_changed()

    def _set_default_output(self):
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        folder = RUN_FOLDER / f"{self.task()}-{stamp}"
        for number in itertools.count(2):
            if not folder.exists():
                break
            folder = RUN_FOLDER / f"{self.task()}-{stamp}-{number}"
        self.panel.output_edit.setText(str(folder))
        self._output_is_default = True

    def advance_output_folder(self):
        """Moves on to a fresh run folder: the default's next name, or, for a folder the
        user chose, the first of "name-2", "name-3", ... that does not exist.

        Returns:
            The new folder.
        """
        if self._output_is_default:
            self._set_default_output()
        else:
            beside = folder_beside(self.panel.output_edit.text().strip())
            self.panel.output_edit.setText(str(beside))
        return self.panel.output_edit.text()

    def restore(self, record):
        """Puts a `RunRecord`'s setup back into the form: task, files, columns, settings
        and probe (the model is the window's to change)."""
        self.set_task(record.task)
        self.panel.train_file_edit.setText(record.train)
        self.panel.eval_file_edit.setText(record.evaluation or "")
        if record.columns and DATA_KINDS[record.task] == "table":
            self.panel.column_form.set_mapping(record.columns)
        elif record.columns and DATA_KINDS[record.task] == "choices":
            self.panel.choice_form.set_mapping(record.columns)
        self.restore_settings(record.settings)
        self.panel.search_form.set_search(record.search)
        if record.probe:
            self.panel.probe_input.set_values(**record.probe)
        self._files_changed()

    def restore_settings(self, settings):
        """Sets the hyperparameters the form knows from `settings` (a run's)."""
        form = self.panel.hyperparameters
        known = {name: value for name, value in settings.items() if form.has_field(name)}
        form.set_values(**known)

    def _output_edited(self):
        self._output_is_default = False

    def set_output_folder(self, folder):
        """Sets the run folder (as if typed)."""
        self.panel.output_edit.setText(str(folder))
        self._output_is_default = False

    def set_training_file(self, path):
        """Sets the training file and loads its preview."""
        self.panel.train_file_edit.setText(str(path))
        self._files_changed()

    def set_evaluation_file(self, path):
        """Sets the evaluation file (None or "" for none)."""
        self.panel.eval_file_edit.setText("" if path is None else str(path))
        self._files_changed()

    def _browse(self, title, edit):
        path = self.context.file_dialogs.open_file(self.panel, title, TASKS[self.task()][1], "data")
        if path:
            edit.setText(path)
            self._files_changed()

    def _browse_training_file(self):
        self._browse("Open the training data", self.panel.train_file_edit)

    def _browse_evaluation_file(self):
        self._browse("Open the evaluation data", self.panel.eval_file_edit)

    def _browse_output_folder(self):
        folder = self.context.file_dialogs.existing_folder(
            self.panel, "Choose the run folder", "runs"
        )
        if folder:
            self.set_output_folder(folder)

    def _show_source(self, source):
        self.panel.source_label.setText(str(source))
        self.panel.source_label.setToolTip(
            "Training starts from the app's current model (change it in the tool bar)."
        )

    def _show_devices(self, *_):
        self.panel.hyperparameters.set_device_count(self.context.environment.local_devices)

    def _update_patience(self):
        has_evaluation = (
            bool(self.panel.eval_file_edit.text().strip()) and self.task() != MASKED_LM
        )
        reason = (
            "Needs an evaluation file." if self.task() != MASKED_LM else "Not used by pretraining."
        )
        self.panel.hyperparameters.set_field_enabled("patience", has_evaluation, reason)

    def _set_config_description(self, description):
        self.panel.hyperparameters.set_config_description(description)
        self._update_patience()
        self.hyperparameters_ready.emit()

    def set_locked(self, locked):
        """Disables the setup while a run uses it (`locked`), or enables it again."""
        self._locked = locked
        for group in self.panel.setup_groups:
            group.setEnabled(not locked)

    def run_completed(self):
        """After a successful run, a default run folder moves on to a new one."""
        if self._output_is_default:
            self._set_default_output()

    # --- Preview and validation -----------------------------------------------------------

    def _files_changed(self):
        self.preview = None
        self._request_preview()
        self.setup_changed.emit()

    @Slot()
    def _request_preview(self):
        panel = self.panel
        train = panel.train_file_edit.text().strip()
        if not train:
            panel.preview_model.clear()
            panel.preview_summary.setText(NO_TRAINING_FILE)
            return
        task = self.task()
        columns = None
        if DATA_KINDS[task] == "table" and panel.column_form.columns():
            columns = panel.column_form.mapping()
        elif DATA_KINDS[task] == "choices" and panel.choice_form.columns():
            columns = panel.choice_form.mapping()
        evaluation = panel.eval_file_edit.text().strip() or None
        panel.preview_summary.setText("Reading the data…")
        self._preview_runner.submit(
            _load_previews, train, evaluation, task, columns, panel.column_form.has_header()
        )

    @Slot(object)
    def _show_previews(self, previews):
        panel = self.panel
        train, evaluation = previews
        self.preview = train
        if train.kind == "table":
            panel.column_form.set_header_option_visible(
                not train.path.lower().endswith((".jsonl", ".json", ".ndjson"))
            )
            if train.file_columns != panel.column_form.columns():
                # Offering new columns re-validates with the guessed mapping.
                panel.column_form.set_columns(train.file_columns)
        elif train.kind == "choices":
            # New columns (or a new format) re-validate with the guessed mapping.
            panel.choice_form.set_columns(
                train.file_columns, csv_file=train.path.lower().endswith(".csv")
            )
        model, view = panel.preview_model, panel.preview_view
        model.set_rows(train.headers, train.rows, train.lines, error_lines(train))
        view.resizeColumnsToContents()
        for column in range(model.columnCount()):
            view.setColumnWidth(column, min(view.columnWidth(column), 360))
        problems = preview_problems(train, evaluation)
        panel.preview_summary.setText(preview_summary(train, evaluation))
        if problems:
            panel.error_banner.show_error("\n".join(problems))
            rows = model.error_rows()
            if rows:
                view.scrollTo(model.index(rows[0], 0))
        elif not self._locked:
            panel.error_banner.clear_error()
        mapping = panel.column_form.mapping() if train.kind == "table" else None
        suggestion = probe_suggestion(train, mapping)
        if suggestion is not None:
            panel.probe_input.suggest(**suggestion)
        self.preview_loaded.emit()

    @Slot(str)
    def _show_preview_error(self, message):
        self.panel.preview_model.clear()
        # The columns offered were the previous file's: this one has none known.
        self.panel.column_form.set_columns(())
        self.panel.preview_summary.setText("The data could not be read.")
        self.panel.error_banner.show_error(message)
        self.preview_loaded.emit()


def _load_previews(train_path, evaluation_path, task, columns, has_header):
    """`(training preview, evaluation preview or None)`; runs in a worker."""
    train = TrainingDataPreview.load(train_path, task, columns, has_header)
    evaluation = None
    if evaluation_path:
        evaluation = TrainingDataPreview.load(
            evaluation_path, task, columns, has_header, max_rows=0
        )
    return train, evaluation
