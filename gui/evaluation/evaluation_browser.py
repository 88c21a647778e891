"""A window over one evaluation: every example, filters, and the task's summary table."""

import dataclasses
import pathlib

import numpy
from PySide6.QtCore import QItemSelection
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QCheckBox
from PySide6.QtWidgets import QDialog
from PySide6.QtWidgets import QGroupBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QSplitter
from PySide6.QtWidgets import QTableView
from PySide6.QtWidgets import QVBoxLayout

from kbert_gui.evaluation.compared_predictions import OTHER_PREFIX
from kbert_gui.evaluation.compared_predictions import disagreements
from kbert_gui.evaluation.confusion_matrix_model import ConfusionMatrixModel
from kbert_gui.evaluation.example_tools import ExampleTools
from kbert_gui.evaluation.entity_type_scores_model import EntityTypeScoresModel
from kbert_gui.evaluation.prediction_filter_bar import PredictionFilterBar
from kbert_gui.evaluation.prediction_filter_model import PredictionFilterModel
from kbert_gui.evaluation.prediction_table_model import PredictionTableModel
from kbert_gui.evaluation.prediction_table_model import display_text
from kbert_gui.services.score_words import metric_name
from kbert_gui.services.score_words import score_text
from kbert_gui.services.score_words import scores_in_percent
from kbert_gui.widgets import style

EXPORT_FILTER = "CSV files (*.csv);;JSON Lines files (*.jsonl)"
# Columns that get the room left: the example's own text.
TEXT_COLUMNS = ("text", "pair", "question", "context")
# Columns of row numbers and ticks, as wide as their title; columns of labels, as wide as
# their widest label (up to LABEL_WIDTH_LIMIT pixels).
NARROW_COLUMNS = ("index", "line", "correct", "agree")
LABEL_COLUMNS = ("gold", "predicted", "other_predicted")
LABEL_WIDTH_LIMIT = 160
# A cell's or a title's margins, sort indicator included.
CELL_MARGIN = 24


class EvaluationBrowser(QDialog):
    """Every example of an evaluation, its gold answer beside the model's prediction.

    Above, the scores; then the filters (`filter_bar`: errors only, gold and predicted
    class, a confidence range) over the sortable table of rows (`table`: long texts
    elided, in full on hover; wrong rows in red). Beside it, for classifiers the
    confusion matrix (`matrix`: a click on a cell lists that gold/predicted pair), for
    taggers the scores per entity type (`entity_types`); QA rows carry each question's
    exact match and F1. Export… writes the rows in view as CSV or JSON Lines, as
    `kbert evaluate --predictions` does.

    Args:
        predictions: kbert's `EvaluationPredictions`.
        title: what was evaluated, for the window title ("dev.csv — model").
        file_dialogs: the app's `FileDialogs`, for Export….
        parent: the parent widget (the window stays open on its own).
        model_access: `(pool, models, source, head[, other_source])`: the app's inference
            pool and `ModelStore`, the model evaluated, its class and the model compared
            with it (if any); for a classifier it adds
            `tools` (`ExampleTools`: edit and predict again, the embeddings' map).
            Rows with a second model's predictions (`compare_predictions`) add
            `disagree_only`, which lists the rows where the two models differ.
    """

    def __init__(self, predictions, title, file_dialogs, parent=None, model_access=None):
        super().__init__(parent)
        self.predictions = predictions
        self._file_dialogs = file_dialogs
        self.setWindowTitle(f"Evaluation: {title}")
        self.setWindowFlag(Qt.WindowType.WindowMaximizeButtonHint, True)
        self.resize(1100, 640)
        self.rows_model = PredictionTableModel(self)
        self.filter_model = PredictionFilterModel(self)
        self.filter_model.setSourceModel(self.rows_model)
        self.matrix_model = ConfusionMatrixModel(self)
        self.matrix = None
        self.entity_types_model = EntityTypeScoresModel(self)
        self.filter_bar = PredictionFilterBar(_classes(predictions), self)
        self.filter_bar.changed.connect(self._filter)
        self.summary = QLabel(summary_text(predictions))
        self.summary.setWordWrap(True)
        self.count_label = QLabel()
        self.count_label.setStyleSheet(style.HINT_STYLE)
        self.export_message = QLabel()
        self.export_message.setStyleSheet(style.HINT_STYLE)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("Save the rows in view as CSV or JSON Lines.")
        self.export_button.clicked.connect(self.export)
        close_button = QPushButton("Close")
        close_button.clicked.connect(self.close)
        self.table = self._build_table()
        self.disagree_only = self._build_disagree_check()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        side = self._build_side()
        self.tools = None
        if model_access is not None and predictions.label_names is not None:
            self.tools = ExampleTools(self, *model_access)
            side = _stacked(side, self.tools)
        if side is not None:
            splitter.addWidget(side)
            splitter.setStretchFactor(0, 3)
            splitter.setStretchFactor(1, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.count_label)
        buttons.addWidget(self.export_message, 1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.filter_bar)
        if self.disagree_only is not None:
            layout.addWidget(self.disagree_only)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)
        self.rows_model.set_predictions(predictions)
        self._size_columns()
        self._count()

    def _build_table(self):
        table = QTableView()
        table.setObjectName("evaluationRows")
        table.setModel(self.filter_model)
        table.setWordWrap(False)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Rows of one height: the view never measures 10,000 rows.
        table.verticalHeader().hide()
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        table.verticalHeader().setDefaultSectionSize(22)
        # File order first; a click on a title sorts by it.
        table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        table.setSortingEnabled(True)
        return table

    def _build_disagree_check(self):
        if "agree" not in self.predictions.columns:
            return None
        check = QCheckBox("Only where the two models disagree")
        check.setObjectName("disagreeOnly")
        mask = disagreements(self.predictions)
        check.toggled.connect(
            lambda on: self._filter(dict(self.filter_bar.filters(), only=mask if on else None))
        )
        return check

    def _size_columns(self):
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        for column, key in enumerate(self.rows_model.keys):
            if key in TEXT_COLUMNS:
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
            elif key in NARROW_COLUMNS:
                header.resizeSection(column, self._narrow_width(column, key))
            elif key in LABEL_COLUMNS:
                header.resizeSection(column, self._label_width(column, key))
            else:
                header.resizeSection(column, self._title_width(column, 90))

    def _label_width(self, column, key):
        """A column of labels as wide as its widest label (of the first rows) and its
        title, at most `LABEL_WIDTH_LIMIT`: the text columns get the rest."""
        metrics = self.table.horizontalHeader().fontMetrics()
        labels = {display_text(key, row.get(key)) for row in self.rows_model.records[:2000]}
        widest = max((metrics.horizontalAdvance(label) for label in labels), default=0)
        return min(LABEL_WIDTH_LIMIT, max(widest + CELL_MARGIN, self._title_width(column, 48)))

    def _title_width(self, column, least):
        """A column as wide as its whole title ("Probability"), `least` at least."""
        title = self.rows_model.headerData(column, Qt.Orientation.Horizontal) or ""
        metrics = self.table.horizontalHeader().fontMetrics()
        return max(least, metrics.horizontalAdvance(title) + CELL_MARGIN)

    def _narrow_width(self, column, key):
        """A column of short values (row numbers, ✓) as wide as its title and its widest
        value ("1,606,296", the line of a long file), 48 px at least."""
        rows = self.rows_model.records
        numbers = (row[key] for row in rows if isinstance(row[key], int))
        widest = True if key in ("correct", "agree") else max(numbers, default=0)
        value = display_text(key, widest)
        title = self.rows_model.headerData(column, Qt.Orientation.Horizontal) or ""
        metrics = self.table.horizontalHeader().fontMetrics()
        needed = max(metrics.horizontalAdvance(text) for text in (value, title)) + CELL_MARGIN
        return max(48, needed)

    def _build_side(self):
        predictions = self.predictions
        if predictions.label_names is not None:
            self.matrix_model.set_matrix(*predictions.confusion_matrix())
            self.matrix = QTableView()
            self.matrix.setObjectName("confusionMatrix")
            self.matrix.setModel(self.matrix_model)
            self.matrix.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
            self.matrix.clicked.connect(self.show_pair)
            return _group("Confusion matrix (gold ↓, predicted →)", self.matrix)
        if predictions.entity_types is not None:
            self.entity_types_model.set_scores(predictions.entity_types)
            self.entity_types = QTableView()
            self.entity_types.setObjectName("entityTypeScores")
            self.entity_types.setModel(self.entity_types_model)
            self.entity_types.verticalHeader().hide()
            self.entity_types.horizontalHeader().setSectionResizeMode(
                QHeaderView.ResizeMode.ResizeToContents
            )
            return _group("Scores per entity type", self.entity_types)
        return None

    def show_pair(self, index):
        """Lists the examples of the confusion-matrix cell `index` (a gold/predicted pair)."""
        self.filter_bar.set_pair(*self.matrix_model.pair(index))

    def _filter(self, filters):
        # The rows selected, and the current one, stay so where they are still in view
        # (read as ranges: a selection of every row is one range, not 10,000 indexes).
        selection = self.table.selectionModel()
        view = self.filter_model
        ranges = [(span.top(), span.bottom()) for span in selection.selection()]
        chosen = view.records_at(_rows_in(ranges))
        current = selection.currentIndex()
        current_record = view.records_at([current.row()] if current.isValid() else [])
        view.set_filters(**filters)
        last = view.columnCount() - 1
        kept = QItemSelection()
        for first, end in _runs(view.rows_of(chosen)):
            kept.select(view.index(first, 0), view.index(end, last))
        selection.select(kept, QItemSelectionModel.SelectionFlag.Select)
        for row in view.rows_of(current_record).tolist():
            flag = QItemSelectionModel.SelectionFlag.NoUpdate
            selection.setCurrentIndex(view.index(row, current.column()), flag)
        self._mark_pair(filters)
        self._count()

    def _mark_pair(self, filters):
        """The matrix marks the cell whose examples are listed, and no cell once other
        filters (or none: "Show all") choose the rows."""
        if self.matrix is None:
            return
        cell = self.matrix_model.cell(filters["gold"], filters["predicted"])
        only_pair = not filters["errors_only"] and (filters["low"], filters["high"]) == (0.0, 1.0)
        selection = self.matrix.selectionModel()
        if cell.isValid() and only_pair:
            selection.setCurrentIndex(cell, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        else:
            selection.clear()

    def _count(self):
        shown, total = self.filter_model.rowCount(), self.rows_model.rowCount()
        self.count_label.setText(f"{shown:,} of {total:,} examples shown")

    def shown_predictions(self):
        """The `EvaluationPredictions` of the rows in view, in the view's order."""
        return dataclasses.replace(self.predictions, rows=tuple(self.filter_model.shown_rows()))

    def export(self):
        """Asks for a file name and writes the rows in view there."""
        chosen = self._file_dialogs.save_file(
            self, "Export predictions", EXPORT_FILTER, "exports", "predictions.csv"
        )
        if chosen:
            self.export_to(chosen)

    def export_to(self, path):
        """Writes the rows in view to `path` (".csv" when the name has no extension)."""
        path = pathlib.Path(path)
        if not path.suffix:
            path = path.with_suffix(".csv")
        try:
            self.shown_predictions().write(path)
        except (ValueError, OSError) as error:
            self.export_message.setText(f"Not saved: {error}")
            self.export_message.setStyleSheet(style.ERROR_TEXT_STYLE)
            return None
        self.export_message.setText(f"Saved {path.name}.")
        self.export_message.setStyleSheet(style.HINT_STYLE)
        return path


def summary_text(predictions):
    """"classification, 872 examples: accuracy 91.2 % · macro F1 91.1 % · MCC 0.824", the
    scores written as the fine-tuning tab writes them; a compared model's after "other
    model:"."""
    in_percent = scores_in_percent(predictions.task)
    own, other = [], []
    for name, value in predictions.scores.items():
        is_other = name.startswith(OTHER_PREFIX)
        key = name[len(OTHER_PREFIX):] if is_other else name
        (other if is_other else own).append(
            f"{metric_name(key)} {score_text(key, value, in_percent)}"
        )
    text = f"{predictions.task}, {len(predictions.rows):,} examples: {' · '.join(own)}"
    return f"{text}; other model: {' · '.join(other)}" if other else text


def _classes(predictions):
    """The values the gold/predicted filters offer: a classifier's labels, the ending indices."""
    if predictions.label_names is not None:
        return list(predictions.label_names)
    if predictions.task == "multiple-choice":
        rows = predictions.rows
        return sorted({row["gold"] for row in rows} | {row["predicted"] for row in rows})
    return []


def _rows_in(ranges):
    """Every row of the (top, bottom) `ranges`, once each, ascending (an array)."""
    rows = [numpy.arange(top, bottom + 1) for top, bottom in ranges]
    return numpy.unique(numpy.concatenate(rows)) if rows else numpy.arange(0)


def _runs(rows):
    """The runs of consecutive numbers in `rows` (an ascending array), as (first, last)."""
    if not len(rows):
        return []
    breaks = numpy.flatnonzero(numpy.diff(rows) != 1)
    firsts = rows[numpy.concatenate(([0], breaks + 1))]
    lasts = rows[numpy.concatenate((breaks, [len(rows) - 1]))]
    return list(zip(firsts.tolist(), lasts.tolist()))


def _stacked(first, second):
    """`first` above `second` in a vertical splitter (`first` may be None)."""
    if first is None:
        return second
    splitter = QSplitter(Qt.Orientation.Vertical)
    splitter.addWidget(first)
    splitter.addWidget(second)
    return splitter


def _group(title, widget):
    group = QGroupBox(title)
    layout = QVBoxLayout(group)
    layout.addWidget(widget)
    return group
