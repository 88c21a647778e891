"""The fine-tuning tab's widgets: the setup column and the Data, Training and Log pages."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QFrame
from PySide6.QtWidgets import QGroupBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QListWidget
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

from kbert_gui.fine_tuning.choice_column_form import ChoiceColumnForm
from kbert_gui.fine_tuning.column_mapping_form import ColumnMappingForm
from kbert_gui.fine_tuning.data_preview_model import DataPreviewModel
from kbert_gui.fine_tuning.evaluation_table_model import EvaluationTableModel
from kbert_gui.fine_tuning.fine_tuning_format import NO_TRAINING_FILE
from kbert_gui.fine_tuning.fine_tuning_tasks import TASK_TOOLTIP
from kbert_gui.fine_tuning.fine_tuning_tasks import TASKS
from kbert_gui.fine_tuning.hyperparameter_form import HyperparameterForm
from kbert_gui.fine_tuning.probe_input import ProbeInput
from kbert_gui.fine_tuning.search_form import SearchForm
from kbert_gui.fine_tuning.search_trials_model import SearchTrialsModel
from kbert_gui.fine_tuning.training_curve_chart import TrainingCurveChart
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets import style
from kbert_gui.widgets.error_banner import ErrorBanner
from kbert_gui.widgets.score_table_view import ScoreTableView


class FineTuningPanel(QWidget):
    """The widgets and layout of the fine-tuning tab, with nothing behind them.

    Left, the setup (`setup_groups`: task, data, hyperparameters, output) above the
    Start, Resume and Cancel buttons; right, `pages`: the data preview, the training
    view (progress, curves, probe, evaluation table, the saved model and the button
    that opens it in its tab) and the log. The `FineTuningSetupController` and the
    `FineTuningRunController` fill them and react to them.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle(TabKey.FINE_TUNING.label)
        self.setObjectName("fineTuningTab")
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

    def set_open_target(self, tab_key):
        """Names the tab (a `TabKey`) that "Open in …" shows the saved model in."""
        self.open_model_button.setText(f"Open in {tab_key.label}")
        self.open_model_button.setToolTip(
            f"Make the saved model the app's model and show the “{tab_key.title}” tab."
        )

    # --- The setup column -------------------------------------------------------------

    def _build_setup(self):
        self.setup_groups = (
            self._build_task_group(),
            self._build_data_group(),
            self._build_settings_group(),
            self._build_search_group(),
            self._build_output_group(),
        )
        setup = QWidget()
        setup_layout = QVBoxLayout(setup)
        setup_layout.setContentsMargins(0, 0, 6, 0)
        for group in self.setup_groups:
            setup_layout.addWidget(group)
        setup_layout.addStretch(1)
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
        column_layout.addLayout(self._build_run_buttons())
        column_layout.addWidget(self.resume_note)
        return column

    def _build_task_group(self):
        self.task_box = QComboBox()
        self.task_box.setObjectName("taskChoice")
        for name, (label, _) in TASKS.items():
            self.task_box.addItem(label, name)
        self.task_box.setToolTip(TASK_TOOLTIP)
        self.source_label = QLabel()
        self.source_label.setObjectName("sourceModel")
        self.source_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.source_label.setWordWrap(True)
        task_group = QGroupBox("Task")
        task_form = QFormLayout(task_group)
        task_form.addRow("Task:", self.task_box)
        task_form.addRow("Start from:", self.source_label)
        return task_group

    def _build_data_group(self):
        self.train_file_edit, self.train_browse_button, train_row = self._path_row(
            "trainFile", "The training data."
        )
        self.eval_file_edit, self.eval_browse_button, eval_row = self._path_row(
            "evalFile",
            "Optional evaluation data: scored after every epoch; the best epoch is kept "
            "and early stopping (patience) becomes available.",
        )
        self.data_help = QLabel()
        self.data_help.setWordWrap(True)
        self.data_help.setStyleSheet(style.HINT_STYLE)
        self.column_form = ColumnMappingForm()
        self.choice_form = ChoiceColumnForm()
        data_group = QGroupBox("Data")
        data_form = QFormLayout(data_group)
        data_form.addRow("Training file:", train_row)
        data_form.addRow("Evaluation file:", eval_row)
        data_form.addRow(self.data_help)
        data_form.addRow(self.column_form)
        data_form.addRow(self.choice_form)
        return data_group

    def column_mapping(self, data_kind):
        """The mapping of the column form for `data_kind` ("table": `column_form`,
        "choices": `choice_form`), or None for other data or while no columns are known."""
        if data_kind == "table":
            return self.column_form.mapping()
        if data_kind == "choices":
            return self.choice_form.mapping()
        return None

    def _build_settings_group(self):
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
        return settings_group

    def _build_search_group(self):
        self.search_form = SearchForm()
        search_group = QGroupBox("Search")
        search_layout = QVBoxLayout(search_group)
        search_layout.addWidget(self.search_form)
        return search_group

    def _build_output_group(self):
        self.output_edit, self.output_browse_button, output_row = self._path_row(
            "outputFolder",
            "The run folder: the best model is saved in its 'model' subfolder, the "
            "training checkpoint beside it. A new run needs an empty or new folder.",
        )
        output_group = QGroupBox("Output")
        output_form = QFormLayout(output_group)
        output_form.addRow("Run folder:", output_row)
        return output_group

    def _build_run_buttons(self):
        self.start_button = QPushButton("Start")
        self.start_button.setObjectName("startButton")
        self.start_button.setDefault(True)
        self.start_button.setShortcut(QKeySequence("Ctrl+Return"))
        self.start_button.setToolTip("Start training (Ctrl+Enter).")
        self.resume_button = QPushButton("Resume")
        self.resume_button.setObjectName("resumeButton")
        self.resume_button.setToolTip(
            "Continue the run in the output folder from its training checkpoint, with the "
            "same data and settings (a finished run just shows its results again)."
        )
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setToolTip(
            "Stop after the current batch and write a checkpoint; Resume continues "
            "(Esc asks first)."
        )
        # Why Resume is off for the run folder's checkpoint, when it is.
        self.resume_note = QLabel()
        self.resume_note.setObjectName("resumeNote")
        self.resume_note.setWordWrap(True)
        self.resume_note.setTextFormat(Qt.TextFormat.RichText)
        self.resume_note.setStyleSheet(style.WARNING_TEXT_STYLE)
        self.resume_note.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.resume_button)
        buttons.addWidget(self.cancel_button)
        return buttons

    def _path_row(self, name, tooltip):
        edit = QLineEdit()
        edit.setObjectName(name)
        edit.setToolTip(tooltip)
        edit.setClearButtonEnabled(True)
        button = QToolButton()
        button.setText("…")
        button.setToolTip("Browse")
        row = QHBoxLayout()
        row.setSpacing(4)
        row.addWidget(edit, 1)
        row.addWidget(button)
        return edit, button, row

    # --- The pages: data, training, log -------------------------------------------------

    def _build_pages(self):
        self.pages = QTabWidget()
        self.pages.setObjectName("fineTuningPages")
        self.pages.addTab(self._build_data_page(), "Data")
        self.pages.addTab(self._build_training_page(), "Training")
        self.log_view = QPlainTextEdit()
        self.log_view.setObjectName("trainingLog")
        self.log_view.setReadOnly(True)
        self.log_view.setMaximumBlockCount(5000)
        self.log_view.setFont(QFont("monospace"))
        self.log_view.setToolTip("Messages of the run, including kbert's log.")
        self.pages.addTab(self.log_view, "Log")
        return self.pages

    def _build_data_page(self):
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
        self.preview_summary = QLabel(NO_TRAINING_FILE)
        self.preview_summary.setObjectName("previewSummary")
        self.preview_summary.setWordWrap(True)
        data_page = QWidget()
        data_layout = QVBoxLayout(data_page)
        data_layout.addWidget(self.preview_summary)
        data_layout.addWidget(self.preview_view, 1)
        return data_page

    def _build_training_page(self):
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

        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.setChildrenCollapsible(False)
        lower.addWidget(self._build_probe_group())
        lower.addWidget(self._build_results_group())
        lower.setSizes([260, 440])
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.setChildrenCollapsible(False)
        vertical.addWidget(self.chart)
        vertical.addWidget(lower)
        vertical.addWidget(self._build_trials_group())
        vertical.setStretchFactor(0, 3)
        vertical.setStretchFactor(1, 2)
        vertical.setStretchFactor(2, 2)
        training_page = QWidget()
        training_layout = QVBoxLayout(training_page)
        training_layout.addWidget(self.progress_bar)
        training_layout.addLayout(status_row)
        training_layout.addWidget(vertical, 1)
        return training_page

    def _build_probe_group(self):
        self.probe_input = ProbeInput()
        self.probe_list = QListWidget()
        self.probe_list.setObjectName("probeResults")
        self.probe_list.setToolTip("The model's prediction for the probe after every epoch.")
        self.probe_list.setWordWrap(True)
        probe_group = QGroupBox("Probe")
        probe_group.setToolTip("Type an example: its prediction refreshes at every epoch end.")
        probe_layout = QVBoxLayout(probe_group)
        probe_layout.addWidget(self.probe_input)
        probe_layout.addWidget(self.probe_list, 1)
        return probe_group

    def _build_trials_group(self):
        """The trials of a search, one row each as they finish (shown for a search only)."""
        self.trials_model = SearchTrialsModel(self)
        self.trials_view = _score_table("searchTrials", self.trials_model)
        self.trials_summary = QLabel("")
        self.trials_summary.setObjectName("searchSummary")
        self.trials_summary.setWordWrap(True)
        self.trials_group = QGroupBox("Search trials")
        trials_layout = QVBoxLayout(self.trials_group)
        trials_layout.addWidget(self.trials_summary)
        trials_layout.addWidget(self.trials_view, 1)
        self.trials_group.hide()
        return self.trials_group

    def _build_results_group(self):
        self.evaluation_model = EvaluationTableModel(self)
        self.evaluation_view = _score_table("evaluationTable", self.evaluation_model)
        self.preset_label = QLabel("")
        self.preset_label.setObjectName("presetPath")
        self.preset_label.setWordWrap(True)
        self.preset_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Its text names the tab the saved model is for (`set_open_target`).
        self.open_model_button = QPushButton()
        self.open_model_button.setObjectName("openSavedModel")
        self.set_open_target(TabKey.CLASSIFY)
        open_row = QHBoxLayout()
        open_row.addWidget(self.open_model_button)
        self.browse_predictions_button = QPushButton("Predictions…")
        self.browse_predictions_button.setObjectName("browsePredictions")
        self.browse_predictions_button.setToolTip(
            "Every example of the evaluation file beside the saved model's prediction."
        )
        self.browse_predictions_button.setEnabled(False)
        open_row.addWidget(self.browse_predictions_button)
        open_row.addStretch(1)
        results_group = QGroupBox("Evaluation")
        results_layout = QVBoxLayout(results_group)
        results_layout.addWidget(self.evaluation_view, 1)
        results_layout.addWidget(self.preset_label)
        results_layout.addLayout(open_row)
        return results_group


def _score_table(name, model):
    """A table of scores showing `model`: no title or value cut (titles wrap onto a
    second line where the columns are narrow; a scroll bar only below that)."""
    return ScoreTableView(model, name)
