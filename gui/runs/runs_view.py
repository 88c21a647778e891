"""Runs compared: every fine-tuning run under a folder, their curves on one chart."""

import pathlib

from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QFileDialog
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QSplitter
from PySide6.QtWidgets import QTableView
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.fine_tuning.fine_tuning_tasks import OPEN_TAB
from kbert_gui.runs.run_curves_chart import RunCurvesChart
from kbert_gui.runs.run_summary import find_runs
from kbert_gui.runs.runs_table_model import RunsTableModel
from kbert_gui.services.score_words import PERCENT_SCORES
from kbert_gui.services.score_words import metric_name
from kbert_gui.services.worker import Worker
from kbert_gui.services.worker_pool import WorkerPool
from kbert_gui.widgets import style
from kbert_gui.widgets.error_banner import ErrorBanner


class RunsView(QWidget):
    """Every fine-tuning run under a folder, as AutoTrain and TensorBoard list them.

    `load(folder)` reads the folder's runs on a worker (`kbert_gui.runs.run_summary`:
    kbert's model metadata and search table, the app's record of each run) and lists
    them in `table` (task, model, data, settings, best score, time, status). The
    selected runs' evaluation scores per epoch share one chart (`chart`). For one
    selected run, "Use this run's setup" emits `setup_chosen(record)` (the run's
    `RunRecord`, for the fine-tuning tab's form) and "Open its model" makes its saved
    model the app's model in the tab that uses it.

    Signals:
        setup_chosen(object): the `RunRecord` whose setup the user wants to run again.
        loaded(): a folder's runs are listed.

    Args:
        context: the `AppContext`.
        parent: the parent widget.
    """

    setup_chosen = Signal(object)
    loaded = Signal()

    def __init__(self, context, parent=None):
        super().__init__(parent)
        self.setObjectName("runsView")
        self.setWindowTitle("Runs compared")
        self.context = context
        self.pool = WorkerPool(max_threads=1, parent=self)
        self._worker = None
        self.model = RunsTableModel(self)
        self.folder_edit = QLineEdit()
        self.folder_edit.setPlaceholderText(
            "A folder of fine-tuning runs (kbert finetune --output …)"
        )
        self.folder_edit.returnPressed.connect(self.refresh)
        choose = QPushButton("Choose…")
        choose.clicked.connect(self._choose_folder)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.error_banner = ErrorBanner()
        self.summary = QLabel("")
        self.summary.setStyleSheet(style.HINT_STYLE)
        self.table = self._build_table()
        self.chart = RunCurvesChart()
        self.setup_button = QPushButton("Use this run's setup")
        self.setup_button.setToolTip(
            "Fill the fine-tuning form with this run's task, files and settings."
        )
        self.setup_button.clicked.connect(self._use_setup)
        self.open_button = QPushButton("Open its model")
        self.open_button.setToolTip("Make this run's saved model the app's model.")
        self.open_button.clicked.connect(self._open_model)
        self._layout(choose)
        self._selection_changed()

    def _build_table(self):
        table = QTableView()
        table.setObjectName("runsTable")
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setAlternatingRowColors(True)
        table.verticalHeader().hide()
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        table.selectionModel().selectionChanged.connect(self._selection_changed)
        return table

    def _layout(self, choose):
        folder_row = QHBoxLayout()
        folder_row.addWidget(QLabel("Runs in"))
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(choose)
        folder_row.addWidget(self.refresh_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(self.setup_button)
        buttons.addWidget(self.open_button)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.table)
        splitter.addWidget(self.chart)
        layout = QVBoxLayout(self)
        layout.addLayout(folder_row)
        layout.addWidget(self.error_banner)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)

    # --- Reading a folder -------------------------------------------------------------

    def load(self, folder):
        """Lists the runs under `folder` (read on a worker; `loaded` when shown)."""
        self.folder_edit.setText(str(folder))
        self.refresh()

    @Slot()
    def refresh(self):
        folder = self.folder_edit.text().strip()
        if not folder:
            return
        if self._worker is not None:
            self._worker.cancel()
        self.summary.setText(f"Reading the runs in {folder}…")
        worker = Worker(lambda worker, path: find_runs(path), folder)
        worker.signals.result.connect(lambda runs: self._show_runs(worker, folder, runs))
        worker.signals.error.connect(lambda message: self._show_error(worker, message))
        self._worker = worker
        self.pool.start(worker)

    def _choose_folder(self):
        folder = QFileDialog.getExistingDirectory(self, "Folder of runs", self.folder_edit.text())
        if folder:
            self.load(folder)

    def _show_runs(self, worker, folder, runs):
        if worker is not self._worker:
            return  # an older folder's runs
        self.error_banner.clear_error()
        self.model.set_runs(runs)
        problems = sum(1 for run in runs if run.problem)
        noted = f" ({problems} with a file not read: see their tooltips)" if problems else ""
        count = f"{len(runs):,} run{'s' if len(runs) != 1 else ''}" if runs else "No runs"
        self.summary.setText(f"{count} in {folder}{noted}.")
        if runs:
            self.table.selectRow(0)
        self._selection_changed()
        self.loaded.emit()

    def _show_error(self, worker, message):
        if worker is self._worker:
            self.error_banner.show_error(message)
            self.summary.setText("")

    # --- Selection ---------------------------------------------------------------------

    def selected_runs(self):
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.model.run(row) for row in rows]

    @Slot()
    def _selection_changed(self):
        runs = self.selected_runs()
        metrics = {run.metric for run in runs if run.metric}
        metric = metrics.pop() if len(metrics) == 1 else None
        title = metric_name(metric) if metric else "evaluation score"
        if metric in PERCENT_SCORES:
            title += " (%)"
        self.chart.set_curves([(run.name, run.curve()) for run in runs], title)
        one = runs[0] if len(runs) == 1 else None
        self.setup_button.setEnabled(one is not None and one.record is not None)
        self.open_button.setEnabled(
            one is not None and one.model_path is not None and one.task in OPEN_TAB
        )

    def _use_setup(self):
        runs = self.selected_runs()
        if len(runs) == 1 and runs[0].record is not None:
            self.setup_chosen.emit(runs[0].record)

    def _open_model(self):
        runs = self.selected_runs()
        if len(runs) == 1 and runs[0].model_path is not None and runs[0].task in OPEN_TAB:
            self.context.open_model(str(pathlib.Path(runs[0].model_path)), OPEN_TAB[runs[0].task])
