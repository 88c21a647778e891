"""The fine-tuning tab: data, settings, a live view of the run, and its result."""

import datetime
import pathlib

from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot
from PySide6.QtGui import QColor
from PySide6.QtGui import QFont
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QFileDialog
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QFrame
from PySide6.QtWidgets import QGroupBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QListWidget
from PySide6.QtWidgets import QListWidgetItem
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QProgressBar
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QScrollArea
from PySide6.QtWidgets import QSplitter
from PySide6.QtWidgets import QTableView
from PySide6.QtWidgets import QTabWidget
from PySide6.QtWidgets import QToolButton
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.column_mapping_form import ColumnMappingForm
from kbert_gui.data_preview_model import DataPreviewModel
from kbert_gui.error_banner import ErrorBanner
from kbert_gui.eta_estimator import EtaEstimator
from kbert_gui.eta_estimator import format_duration
from kbert_gui.evaluation_table_model import EvaluationTableModel
from kbert_gui.fine_tuning_job import MASKED_LM
from kbert_gui.fine_tuning_job import FineTuningJob
from kbert_gui.hyperparameter_form import describe_config
from kbert_gui.hyperparameter_form import HyperparameterForm
from kbert_gui.latest_request_runner import LatestRequestRunner
from kbert_gui.probe_input import ProbeInput
from kbert_gui.training_data_preview import DATA_KINDS
from kbert_gui.training_curve_chart import TrainingCurveChart
from kbert_gui.training_data_preview import TrainingDataPreview

# The training checkpoint `FineTuner` and `PretrainingLoop` write in their output folder
# (`kbert.tasks.fine_tuner.CHECKPOINT_FILE`; importing it here would load Keras).
CHECKPOINT_FILE = "training_checkpoint.h5"
# task name: (label, file-dialog filter)
TASKS = {
    "classification": (
        "Text classification",
        "Tables (*.csv *.tsv *.jsonl *.json *.ndjson);;All files (*)",
    ),
    "pair-classification": (
        "Text-pair classification",
        "Tables (*.csv *.tsv *.jsonl *.json *.ndjson);;All files (*)",
    ),
    "token-classification": (
        "Token classification (CoNLL)",
        "CoNLL files (*.conll *.txt *.iob *.bio *.tsv);;All files (*)",
    ),
    "qa": ("Question answering (SQuAD)", "SQuAD files (*.json);;All files (*)"),
    MASKED_LM: ("Continued masked-LM pretraining", "Text files (*.txt);;All files (*)"),
}
TASK_TOOLTIP = (
    "<b>Text classification</b>: one label per text (CSV, TSV or JSON Lines).<br>"
    "<b>Text-pair classification</b>: one label per pair of texts (e.g. entailment).<br>"
    "<b>Token classification</b>: a tag per word, CoNLL format (named entities).<br>"
    "<b>Question answering</b>: answer spans in a context, SQuAD v1.1/v2.0 JSON.<br>"
    "<b>Continued masked-LM pretraining</b>: adapt the model to the language of a plain "
    "text file (documents separated by blank lines)."
)
DATA_HELP = {
    "table": "Map the file's columns below; rows the reader rejects are marked red.",
    "conll": "CoNLL: one word per line, its tag in the last column, a blank line between sentences.",
    "squad": "SQuAD JSON: data → paragraphs → context and qas (question, answers).",
    "text": "Plain text: one sentence or paragraph per line, documents separated by blank lines.",
}
RUN_FOLDER = pathlib.Path.home() / "kbert-runs"


class FineTuningTab(QWidget):
    """Point-and-click fine-tuning of the current model.

    Left, the setup: the task, the training (and optional evaluation) file, the column
    mapping of table files, the hyperparameters (kbert's `FineTuningConfig`, with its
    defaults and documentation) and the output folder. Right, three pages: the data
    preview (first 200 rows, rows the reader rejects in red), the training view
    (progress with ETA, live loss and metric curves, the probe and its prediction at
    every epoch, the evaluation table, the saved preset with one click to open it in
    the explorer or QA tab), and the log.

    The run is a `FineTuningJob` on the context's training pool. Cancel stops it after
    the current batch with a checkpoint; Resume continues a run whose output folder
    holds one.

    Signals:
        training_event(object): every progress event of the running job (see
            `FineTuningJob`), after the tab has shown it.
        run_finished(str): the run ended: "completed", "stopped_early", "cancelled"
            or "failed".
        preview_loaded(): a data preview (and its validation) is shown.

    Args:
        context: the `AppContext`.
        parent: the parent widget.
    """

    training_event = Signal(object)
    run_finished = Signal(str)
    preview_loaded = Signal()

    def __init__(self, context, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Fine-tuning")
        self.setObjectName("fineTuningTab")
        self.context = context
        self.worker = None
        self.job = None
        self.result = None
        self.preview = None
        self._running = False
        self._cancelling = False
        self._finished_status = None
        self._output_is_default = True
        self._last_run = None
        self._data_kind = None
        self._epoch_rows = []
        self._eta = EtaEstimator()
        self._preview_runner = LatestRequestRunner(
            context.inference_pool, delay_ms=150, parent=self
        )
        self._preview_runner.result.connect(self._show_previews)
        self._preview_runner.error.connect(self._show_preview_error)

        self.error_banner = ErrorBanner()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self._build_setup())
        splitter.addWidget(self._build_pages())
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([390, 710])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(6)
        layout.addWidget(self.error_banner)
        layout.addWidget(splitter, 1)

        context.models.source_changed.connect(self._show_source)
        self._show_source(context.models.source)
        self.set_task("classification")
        worker = context.run_inference(_load_config_description)
        worker.signals.result.connect(self._set_config_description)
        worker.signals.error.connect(self.error_banner.show_error)
        self._update_buttons()

    # --- Building ----------------------------------------------------------------------

    def _build_setup(self):
        self.task_box = QComboBox()
        self.task_box.setObjectName("taskChoice")
        for name, (label, _) in TASKS.items():
            self.task_box.addItem(label, name)
        self.task_box.setToolTip(TASK_TOOLTIP)
        self.task_box.currentIndexChanged.connect(self._task_chosen)
        self.source_label = QLabel()
        self.source_label.setObjectName("sourceModel")
        self.source_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.source_label.setWordWrap(True)
        task_group = QGroupBox("Task")
        task_form = QFormLayout(task_group)
        task_form.addRow("Task:", self.task_box)
        task_form.addRow("Start from:", self.source_label)

        self.train_file_edit, train_row = self._path_row(
            "trainFile", "The training data.", self._browse_training_file
        )
        self.eval_file_edit, eval_row = self._path_row(
            "evalFile",
            "Optional evaluation data: scored after every epoch; the best epoch is kept "
            "and early stopping (patience) becomes available.",
            self._browse_evaluation_file,
        )
        self.train_file_edit.editingFinished.connect(self._files_changed)
        self.eval_file_edit.editingFinished.connect(self._files_changed)
        self.eval_file_edit.textChanged.connect(self._update_patience)
        self.data_help = QLabel()
        self.data_help.setWordWrap(True)
        self.data_help.setStyleSheet("color: palette(mid);")
        self.column_form = ColumnMappingForm()
        self.column_form.mapping_changed.connect(self._request_preview)
        self.column_form.header_changed.connect(self._request_preview)
        data_group = QGroupBox("Data")
        data_form = QFormLayout(data_group)
        data_form.addRow("Training file:", train_row)
        data_form.addRow("Evaluation file:", eval_row)
        data_form.addRow(self.data_help)
        data_form.addRow(self.column_form)

        self.hyperparameters = HyperparameterForm()
        self.reset_button = QToolButton()
        self.reset_button.setText("Reset to defaults")
        self.reset_button.setObjectName("resetSettings")
        self.reset_button.setToolTip("Set every hyperparameter back to kbert's default.")
        self.reset_button.clicked.connect(self.hyperparameters.reset)
        settings_group = QGroupBox("Hyperparameters")
        settings_layout = QVBoxLayout(settings_group)
        settings_layout.addWidget(self.hyperparameters)
        settings_layout.addWidget(self.reset_button, 0, Qt.AlignmentFlag.AlignRight)

        self.output_edit, output_row = self._path_row(
            "outputFolder",
            "The run folder: the best model is saved in its 'model' subfolder, the "
            "training checkpoint beside it. A new run needs an empty or new folder.",
            self._browse_output_folder,
        )
        self.output_edit.textEdited.connect(self._output_edited)
        self.output_edit.textChanged.connect(self._update_buttons)
        output_group = QGroupBox("Output")
        output_form = QFormLayout(output_group)
        output_form.addRow("Run folder:", output_row)

        self.start_button = QPushButton("Start")
        self.start_button.setObjectName("startButton")
        self.start_button.setDefault(True)
        self.start_button.setShortcut(QKeySequence("Ctrl+Return"))
        self.start_button.setToolTip("Start training (Ctrl+Enter).")
        self.start_button.clicked.connect(self.start)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setObjectName("resumeButton")
        self.resume_button.setToolTip(
            "Continue the run in the output folder from its training checkpoint, with the "
            "same data and settings (a finished run just shows its results again)."
        )
        self.resume_button.clicked.connect(self.resume)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setShortcut(QKeySequence.StandardKey.Cancel)
        self.cancel_button.setToolTip(
            "Stop after the current batch and write a checkpoint; Resume continues (Esc)."
        )
        self.cancel_button.clicked.connect(self.cancel)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.resume_button)
        buttons.addWidget(self.cancel_button)

        setup = QWidget()
        setup_layout = QVBoxLayout(setup)
        setup_layout.setContentsMargins(0, 0, 6, 0)
        for group in (task_group, data_group, settings_group, output_group):
            setup_layout.addWidget(group)
        setup_layout.addStretch(1)
        self._setup_groups = (task_group, data_group, settings_group, output_group)
        scroll = QScrollArea()
        scroll.setWidget(setup)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # The buttons stay in view below the scrolling setup.
        column = QWidget()
        column.setMinimumWidth(340)
        column_layout = QVBoxLayout(column)
        column_layout.setContentsMargins(0, 0, 0, 0)
        column_layout.addWidget(scroll, 1)
        column_layout.addLayout(buttons)
        return column

    def _path_row(self, name, tooltip, browse):
        edit = QLineEdit()
        edit.setObjectName(name)
        edit.setToolTip(tooltip)
        edit.setClearButtonEnabled(True)
        button = QToolButton()
        button.setText("…")
        button.setToolTip("Browse")
        button.clicked.connect(browse)
        row = QHBoxLayout()
        row.setSpacing(4)
        row.addWidget(edit, 1)
        row.addWidget(button)
        return edit, row

    def _build_pages(self):
        self.pages = QTabWidget()
        self.pages.setObjectName("fineTuningPages")

        # Data page.
        self.preview_model = DataPreviewModel(self)
        self.preview_view = QTableView()
        self.preview_view.setObjectName("dataPreview")
        self.preview_view.setModel(self.preview_model)
        self.preview_view.setAlternatingRowColors(True)
        self.preview_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.preview_view.setWordWrap(False)
        self.preview_view.horizontalHeader().setStretchLastSection(True)
        self.preview_view.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.Interactive
        )
        self.preview_view.verticalHeader().setDefaultSectionSize(22)
        self.preview_summary = QLabel("Open a training file to see its first rows here.")
        self.preview_summary.setObjectName("previewSummary")
        self.preview_summary.setWordWrap(True)
        data_page = QWidget()
        data_layout = QVBoxLayout(data_page)
        data_layout.addWidget(self.preview_summary)
        data_layout.addWidget(self.preview_view, 1)
        self.pages.addTab(data_page, "Data")

        # Training page.
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("trainingProgress")
        self.progress_bar.setFormat("No run yet")
        self.progress_bar.setRange(0, 1)
        self.progress_bar.setValue(0)
        self.eta_label = QLabel("")
        self.eta_label.setObjectName("etaLabel")
        self.eta_label.setMinimumWidth(150)
        self.eta_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.status_label = QLabel("Ready.")
        self.status_label.setObjectName("runStatus")
        self.status_label.setWordWrap(True)
        status_row = QHBoxLayout()
        status_row.addWidget(self.status_label, 1)
        status_row.addWidget(self.eta_label)

        self.chart = TrainingCurveChart()

        self.probe_input = ProbeInput()
        self.probe_input.probe_changed.connect(self._probe_changed)
        self.probe_list = QListWidget()
        self.probe_list.setObjectName("probeResults")
        self.probe_list.setToolTip("The model's prediction for the probe after every epoch.")
        self.probe_list.setWordWrap(True)
        probe_group = QGroupBox("Probe")
        probe_group.setToolTip("Type an example: its prediction refreshes at every epoch end.")
        probe_layout = QVBoxLayout(probe_group)
        probe_layout.addWidget(self.probe_input)
        probe_layout.addWidget(self.probe_list, 1)

        self.evaluation_model = EvaluationTableModel(self)
        self.evaluation_view = QTableView()
        self.evaluation_view.setObjectName("evaluationTable")
        self.evaluation_view.setModel(self.evaluation_model)
        self.evaluation_view.verticalHeader().setVisible(False)
        self.evaluation_view.verticalHeader().setDefaultSectionSize(22)
        self.evaluation_view.setAlternatingRowColors(True)
        self.evaluation_view.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )
        self.evaluation_view.horizontalHeader().setStretchLastSection(True)
        self.preset_label = QLabel("")
        self.preset_label.setObjectName("presetPath")
        self.preset_label.setWordWrap(True)
        self.preset_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_explorer_button = QPushButton("Open in explorer")
        self.open_explorer_button.setObjectName("openInExplorer")
        self.open_explorer_button.setToolTip(
            "Make the saved model the app's model and show the explorer."
        )
        self.open_explorer_button.clicked.connect(self.open_in_explorer)
        self.open_qa_button = QPushButton("Open in QA")
        self.open_qa_button.setObjectName("openInQA")
        self.open_qa_button.setToolTip("Make the saved model the app's model and show the QA tab.")
        self.open_qa_button.clicked.connect(self.open_in_question_answering)
        open_row = QHBoxLayout()
        open_row.addWidget(self.open_explorer_button)
        open_row.addWidget(self.open_qa_button)
        open_row.addStretch(1)
        results_group = QGroupBox("Evaluation")
        results_layout = QVBoxLayout(results_group)
        results_layout.addWidget(self.evaluation_view, 1)
        results_layout.addWidget(self.preset_label)
        results_layout.addLayout(open_row)

        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.setChildrenCollapsible(False)
        lower.addWidget(probe_group)
        lower.addWidget(results_group)
        lower.setSizes([300, 400])
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.setChildrenCollapsible(False)
        vertical.addWidget(self.chart)
        vertical.addWidget(lower)
        vertical.setStretchFactor(0, 3)
        vertical.setStretchFactor(1, 2)
        training_page = QWidget()
        training_layout = QVBoxLayout(training_page)
        training_layout.addWidget(self.progress_bar)
        training_layout.addLayout(status_row)
        training_layout.addWidget(vertical, 1)
        self.pages.addTab(training_page, "Training")

        # Log page.
        self.log_view = QPlainTextEdit()
        self.log_view.setObjectName("trainingLog")
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(5000)
        self.log_view.setFont(QFont("monospace"))
        self.log_view.setToolTip("Messages of the run, including kbert's log.")
        self.pages.addTab(self.log_view, "Log")
        return self.pages

    # --- Setup -------------------------------------------------------------------------

    def task(self):
        """The chosen task name ("classification", ..., "masked-lm")."""
        return self.task_box.currentData()

    def set_task(self, task_name):
        """Chooses the task by name."""
        index = self.task_box.findData(task_name)
        if index < 0:
            raise ValueError(f"Unknown task {task_name!r}; the tasks are {list(TASKS)}.")
        if index == self.task_box.currentIndex():
            self._task_chosen()
        else:
            self.task_box.setCurrentIndex(index)

    def _task_chosen(self):
        task = self.task()
        kind = DATA_KINDS[task]
        if self._data_kind not in (None, kind):
            # Another kind of file: the previous ones do not fit.
            self.train_file_edit.clear()
            self.eval_file_edit.clear()
            self.error_banner.clear_error()
        self._data_kind = kind
        self.column_form.setVisible(kind == "table")
        self.column_form.set_pair_visible(task == "pair-classification")
        self.data_help.setText(DATA_HELP[kind])
        self.probe_input.set_task(task)
        if task == MASKED_LM:
            self.chart.set_names("training loss", "MLM accuracy (running)", metric_markers=False)
        else:
            self.chart.set_names("training loss", "evaluation metric")
        self.open_qa_button.setEnabled(False)
        self.open_explorer_button.setEnabled(False)
        if self._output_is_default:
            self._set_default_output()
        self._update_patience()
        self._files_changed()

    def _set_default_output(self):
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.output_edit.setText(str(RUN_FOLDER / f"{self.task()}-{stamp}"))
        self._output_is_default = True

    def _output_edited(self):
        self._output_is_default = False

    def set_output_folder(self, folder):
        """Sets the run folder (as if typed)."""
        self.output_edit.setText(str(folder))
        self._output_is_default = False

    def set_training_file(self, path):
        """Sets the training file and loads its preview."""
        self.train_file_edit.setText(str(path))
        self._files_changed()

    def set_evaluation_file(self, path):
        """Sets the evaluation file (None or "" for none)."""
        self.eval_file_edit.setText("" if path is None else str(path))
        self._files_changed()

    def _browse(self, title, edit):
        task = self.task()
        path, _ = QFileDialog.getOpenFileName(
            self, title, edit.text() or str(pathlib.Path.home()), TASKS[task][1]
        )
        if path:
            edit.setText(path)
            self._files_changed()

    def _browse_training_file(self):
        self._browse("Open the training data", self.train_file_edit)

    def _browse_evaluation_file(self):
        self._browse("Open the evaluation data", self.eval_file_edit)

    def _browse_output_folder(self):
        folder = QFileDialog.getExistingDirectory(
            self, "Choose the run folder", str(RUN_FOLDER.parent)
        )
        if folder:
            self.set_output_folder(folder)

    def _show_source(self, source):
        self.source_label.setText(str(source))
        self.source_label.setToolTip(
            "Training starts from the app's current model (change it in the tool bar)."
        )

    def _update_patience(self):
        has_evaluation = bool(self.eval_file_edit.text().strip()) and self.task() != MASKED_LM
        reason = (
            "Needs an evaluation file." if self.task() != MASKED_LM else "Not used by pretraining."
        )
        self.hyperparameters.set_field_enabled("patience", has_evaluation, reason)

    def _set_config_description(self, description):
        self.hyperparameters.set_config_description(description)
        self._update_patience()
        self._update_buttons()

    # --- Preview and validation -----------------------------------------------------------

    def _files_changed(self):
        self.preview = None
        self._request_preview()

    @Slot()
    def _request_preview(self):
        train = self.train_file_edit.text().strip()
        if not train:
            self.preview_model.clear()
            self.preview_summary.setText("Open a training file to see its first rows here.")
            return
        task = self.task()
        columns = None
        if DATA_KINDS[task] == "table" and self.column_form.columns():
            columns = self.column_form.mapping()
        evaluation = self.eval_file_edit.text().strip() or None
        self.preview_summary.setText("Reading the data…")
        self._preview_runner.submit(
            _load_previews, train, evaluation, task, columns, self.column_form.has_header()
        )

    @Slot(object)
    def _show_previews(self, previews):
        train, evaluation = previews
        self.preview = train
        if train.kind == "table":
            self.column_form.set_header_option_visible(
                not train.path.lower().endswith((".jsonl", ".json", ".ndjson"))
            )
            if train.file_columns != self.column_form.columns():
                # Offering new columns re-validates with the guessed mapping.
                self.column_form.set_columns(train.file_columns)
        errors = (
            {train.error_line: train.error} if train.error and train.error_line is not None else {}
        )
        self.preview_model.set_rows(train.headers, train.rows, train.lines, errors)
        self.preview_view.resizeColumnsToContents()
        for column in range(self.preview_model.columnCount()):
            self.preview_view.setColumnWidth(
                column, min(self.preview_view.columnWidth(column), 360)
            )
        problems = [
            preview.error
            for preview in (train, evaluation)
            if preview is not None and preview.error
        ]
        rejected = "the reader rejects the file (see the message above)"
        summary = f"Training: {train.summary or rejected}"
        if evaluation is not None:
            summary += f"\nEvaluation: {evaluation.summary or rejected}"
        self.preview_summary.setText(summary)
        if problems:
            self.error_banner.show_error("\n".join(problems))
            rows = self.preview_model.error_rows()
            if rows:
                self.preview_view.scrollTo(self.preview_model.index(rows[0], 0))
        elif not self._running:
            self.error_banner.clear_error()
        self._suggest_probe(train)
        self.preview_loaded.emit()

    @Slot(str)
    def _show_preview_error(self, message):
        self.preview_model.clear()
        self.preview_summary.setText("The data could not be read.")
        self.error_banner.show_error(message)
        self.preview_loaded.emit()

    def _suggest_probe(self, preview):
        if not preview.rows or (
            preview.error and (preview.kind != "table" or preview.error_line == preview.lines[0])
        ):
            # Rejected files show raw lines, not examples.
            return
        first = preview.rows[0]
        if preview.kind == "table":
            mapping = self.column_form.mapping() or {}
            positions = {}
            for field in ("text_column", "pair_column"):
                column = mapping.get(field)
                if isinstance(column, int):
                    positions[field] = column
                elif column in preview.headers:
                    positions[field] = preview.headers.index(column)
            self.probe_input.suggest(
                text=first[positions["text_column"]] if "text_column" in positions else None,
                pair=first[positions["pair_column"]] if "pair_column" in positions else None,
            )
        elif preview.kind == "conll":
            self.probe_input.suggest(text=first[0])
        elif preview.kind == "squad":
            self.probe_input.suggest(question=first[1], context=first[3])
        elif preview.kind == "text":
            words = next((row[0].split() for row in preview.rows if len(row[0].split()) >= 3), None)
            if words:
                words[len(words) // 2] = "[MASK]"
                self.probe_input.suggest(text=" ".join(words))

    # --- Running -----------------------------------------------------------------------

    @Slot()
    def start(self):
        """Starts a new run with the current setup."""
        self._start(resume=False)

    @Slot()
    def resume(self):
        """Continues the run in the output folder from its checkpoint."""
        self._start(resume=True)

    def _start(self, resume):
        if self._running:
            return
        self.error_banner.clear_error()
        train = self.train_file_edit.text().strip()
        output = self.output_edit.text().strip()
        task = self.task()
        problem = None
        if not self.hyperparameters.is_ready:
            problem = "The hyperparameters are still loading."
        elif not train:
            problem = "Choose a training file."
        elif not output:
            problem = "Choose a run folder."
        elif DATA_KINDS[task] == "table" and self.column_form.mapping() is None:
            problem = "The training file's columns are not known yet."
        if problem:
            self.error_banner.show_error(problem)
            return
        settings = self.hyperparameters.values()
        if not self.hyperparameters.widget("patience").isEnabled():
            settings["patience"] = None
        self.job = FineTuningJob(
            task,
            self.context.models.source,
            output,
            train,
            self.eval_file_edit.text().strip() or None,
            columns=self.column_form.mapping() if DATA_KINDS[task] == "table" else None,
            settings=settings,
            probe=self.probe_input.probe(),
            resume=resume,
            preset_folder=self.context.models.preset_folder,
        )
        run = (task, str(pathlib.Path(output).expanduser()))
        if not (resume and self._last_run == run):
            self.chart.clear()
            self.probe_list.clear()
            self._epoch_rows = []
        self._last_run = run
        self.result = None
        self.evaluation_model.set_rows(self._epoch_rows)
        self.preset_label.clear()
        self.progress_bar.setRange(0, 0)
        self.eta_label.setText("")
        self.status_label.setText("Resuming…" if resume else "Loading the model and the data…")
        self.open_explorer_button.setEnabled(False)
        self.open_qa_button.setEnabled(False)
        self._append_log(
            f"— {'Resuming' if resume else 'Starting'} {TASKS[task][0].lower()} in {output}"
        )
        self._set_running(True)
        self.pages.setCurrentIndex(1)

        worker = self.context.run_training(self.job)
        worker.signals.progress.connect(self._on_event)
        worker.signals.result.connect(self._on_result)
        worker.signals.error.connect(self._on_error)
        worker.signals.cancelled.connect(self._on_cancelled)
        worker.signals.finished.connect(self._on_finished)
        self.worker = worker

    @Slot()
    def cancel(self):
        """Asks the run to stop after the current batch (it writes a checkpoint)."""
        if not self._running or self._cancelling:
            return
        self._cancelling = True
        self.worker.cancel()
        self.status_label.setText("Cancelling after the current batch…")
        self._append_log("— Cancel requested")
        self._update_buttons()

    def _set_running(self, running):
        self._running = running
        self._cancelling = False
        for group in self._setup_groups:
            group.setEnabled(not running)
        self._update_buttons()

    @Slot()
    def _update_buttons(self):
        ready = self.hyperparameters.is_ready and not self._running
        self.start_button.setEnabled(ready)
        self.resume_button.setEnabled(ready and self.has_checkpoint())
        self.cancel_button.setEnabled(self._running and not self._cancelling)

    def has_checkpoint(self):
        """Whether the output folder holds a training checkpoint to resume from."""
        output = self.output_edit.text().strip()
        return bool(output) and (pathlib.Path(output).expanduser() / CHECKPOINT_FILE).is_file()

    def _probe_changed(self):
        if self._running and self.job is not None:
            self.job.set_probe(self.probe_input.probe())

    # --- Progress (UI thread, from the worker's signals) ----------------------------------

    @Slot(object)
    def _on_event(self, event):
        kind = event["kind"]
        if kind == "step":
            self._show_step(event)
        elif kind == "epoch_end":
            self._show_epoch(event)
        elif kind == "probe":
            self._show_probe(event)
        elif kind == "log":
            self._append_log(
                event["message"]
                if event.get("level", "INFO") == "INFO"
                else f"{event['level']}: {event['message']}"
            )
        elif kind == "train_begin":
            total = max(int(event["total_steps"]), 1)
            self.progress_bar.setRange(0, total)
            self.progress_bar.setFormat("%v / %m steps")
            self.chart.set_total_steps(total)
            self._eta.start(total)
            self.status_label.setText("Training…")
        elif kind == "train_end":
            self.result = event["result"]
        self.training_event.emit(event)

    def _show_step(self, event):
        step = event["step"]
        self.progress_bar.setValue(min(step, self.progress_bar.maximum()))
        self._eta.step_done(step, event["time"])
        left = self._eta.seconds_left()
        if left is not None:
            per_step = self._eta.seconds_per_step()
            self.eta_label.setText(f"ETA {format_duration(left)} · {per_step * 1000:.0f} ms/step")
        if event.get("loss") is not None:
            self.chart.add_loss_point(step, event["loss"])
        if event.get("metric") is not None:
            self.chart.add_metric_point(step, event["metric"])
        if event.get("epoch") is not None and not self._cancelling:
            self.status_label.setText(f"Training: epoch {event['epoch']}, step {step}")

    def _show_epoch(self, event):
        logs = event["logs"]
        metric, value = event["metric"], event["value"]
        if value is not None:
            self.chart.set_names("training loss", f"evaluation {metric.replace('_', ' ')}")
            self.chart.add_metric_point(event["step"], value)
        self._epoch_rows = [row for row in self._epoch_rows if row.get("epoch") != event["epoch"]]
        self._epoch_rows.append(dict(logs))
        self.evaluation_model.set_rows(self._epoch_rows)
        scores = ", ".join(
            f"{key} {number:.4g}"
            for key, number in logs.items()
            if key != "epoch" and isinstance(number, float)
        )
        self._append_log(f"Epoch {event['epoch']}: {scores}")

    def _show_probe(self, event):
        where = f"Epoch {event['epoch']}" if event["epoch"] is not None else "Saved model"
        text = event["error"] if event["error"] else describe_prediction(event["result"])
        item = QListWidgetItem(f"{where}: {text}")
        item.setToolTip(f"{where}\n{text}")
        if event["error"]:
            item.setForeground(QColor("#8a1c1c"))
        self.probe_list.addItem(item)
        self.probe_list.scrollToBottom()

    def _append_log(self, message):
        stamp = datetime.datetime.now().strftime("%H:%M:%S")
        self.log_view.appendPlainText(f"{stamp}  {message}")

    @Slot(object)
    def _on_result(self, result):
        self.result = result
        status = result.status
        preset = result.preset_path
        if hasattr(result, "history"):
            rows = [dict(entry) for entry in result.history]
            best = next(
                (index for index, row in enumerate(rows) if row.get("epoch") == result.best_epoch),
                None,
            )
            reason = (
                f"Best {result.metric}: this epoch's model was saved."
                if result.metric
                else "Last epoch: saved."
            )
            self.evaluation_model.set_rows(rows, best, reason)
            if result.metric:
                summary = (
                    f"best {result.metric} {result.best_metric:.4f} at epoch {result.best_epoch}"
                )
            else:
                summary = f"{len(rows)} epochs (no evaluation data: the last epoch is saved)"
        else:
            rows = [{"data": "training", **result.train_metrics}]
            if result.eval_metrics:
                rows.append({"data": "evaluation", **result.eval_metrics})
            self.evaluation_model.set_rows(rows)
            summary = f"{result.global_step} steps"
        heading = {"completed": "Completed", "stopped_early": "Stopped early"}.get(status, status)
        self.status_label.setText(f"{heading}: {summary}.")
        self.eta_label.setText("")
        if preset is not None:
            self.context.models.forget(str(preset))
            self.preset_label.setText(f"Saved model: {preset}")
            self.preset_label.setToolTip(str(preset))
            self.open_explorer_button.setEnabled(True)
            self.open_qa_button.setEnabled(True)
        self._append_log(f"— {heading}: {summary}. Model: {preset}")
        self._finished_status = status

    @Slot(str)
    def _on_error(self, message):
        self.error_banner.show_error(message)
        self.status_label.setText("Failed: see the message above.")
        self._append_log(f"ERROR: {message}")
        self._finished_status = "failed"

    @Slot()
    def _on_cancelled(self):
        if self.result is not None and self.result.status != "cancelled":
            # The run ended on its own before it saw the request.
            self._on_result(self.result)
            return
        steps = self.result.global_step if self.result is not None else None
        where = f" after step {steps}" if steps else ""
        self.status_label.setText(f"Cancelled{where}. Resume continues from the checkpoint.")
        self.eta_label.setText("")
        self._append_log(f"— Cancelled{where}")
        self._finished_status = "cancelled"

    @Slot()
    def _on_finished(self):
        status = self._finished_status or "failed"
        self._finished_status = None
        if self.progress_bar.maximum() == 0:
            self.progress_bar.setRange(0, 1)
        self._set_running(False)
        if status in ("completed", "stopped_early") and self._output_is_default:
            self._set_default_output()
        self._update_buttons()
        self.run_finished.emit(status)

    # --- The saved model -------------------------------------------------------------

    def _preset_path(self):
        return (
            None
            if self.result is None or self.result.preset_path is None
            else str(self.result.preset_path)
        )

    @Slot()
    def open_in_explorer(self):
        """Makes the saved model the app's model and shows the explorer tab."""
        if self._preset_path():
            self.context.open_model(self._preset_path(), "explorer")

    @Slot()
    def open_in_question_answering(self):
        """Makes the saved model the app's model and shows the QA tab."""
        if self._preset_path():
            self.context.open_model(self._preset_path(), "qa")


def _load_config_description(worker):
    return describe_config()


def _load_previews(train_path, evaluation_path, task, columns, has_header):
    """`(training preview, evaluation preview or None)`; runs in a worker."""
    train = TrainingDataPreview.load(train_path, task, columns, has_header)
    evaluation = None
    if evaluation_path:
        evaluation = TrainingDataPreview.load(
            evaluation_path, task, columns, has_header, max_rows=0
        )
    return train, evaluation


def describe_prediction(result):
    """One line for a probe's prediction (`Classification`, entity spans,
    `AnswerResult` or `FillMaskResult`)."""
    if hasattr(result, "probabilities"):
        ranked = sorted(result.probabilities.items(), key=lambda item: -item[1])[:3]
        return " · ".join(f"{label} {probability:.0%}" for label, probability in ranked)
    if hasattr(result, "answers"):
        if result.is_impossible or not result.answers:
            return "(no answer)"
        return " · ".join(f"“{answer.text}” {answer.probability:.0%}" for answer in result.answers)
    if hasattr(result, "masks"):
        return "; ".join(
            "[MASK] → "
            + ", ".join(
                f"{candidate.token} {candidate.probability:.0%}"
                for candidate in mask.candidates[:3]
            )
            for mask in result.masks
        )
    if isinstance(result, list):
        if not result:
            return "(no entities)"
        return ", ".join(f"{span.text} [{span.label} {span.score:.0%}]" for span in result)
    return str(result)
