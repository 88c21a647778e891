"""Which evaluation rows are in view: errors only, a gold or predicted class, a confidence range."""

import numpy
from PySide6.QtCore import QAbstractTableModel
from PySide6.QtCore import QModelIndex
from PySide6.QtCore import Qt


class PredictionFilterModel(QAbstractTableModel):
    """A sortable, filtered view of a `PredictionTableModel` (which sorts its own rows).

    A row is in view when it passes every filter that is set: `errors_only` (the
    prediction is wrong), `gold` and `predicted` (the row's gold / predicted value
    equals it; None: any), and the confidence range `low` <= probability <= `high`
    (rows without a probability pass only the full range), and `only` (a boolean array
    over the records: two models' disagreements). The rows in view keep the source's
    order; a record the source replaces (an edited example) keeps its row until the
    filters change.

    Each filter is a NumPy mask over the records, taken once from the source's rows;
    the rows in view are the source rows whose record passes them all (one array),
    so a filter change or a sort costs no Python call per row. Cells are the source's
    own (`record_data`).

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.errors_only = False
        self.gold = None
        self.predicted = None
        self.low, self.high = 0.0, 1.0
        self.only = None
        self._source = None
        self._fields = None
        self._shown = numpy.arange(0)
        self._records_shown = []
        self._row_count = self._column_count = 0
        self._records = ()
        self._record_data = None
        self._kept = []

    def sourceModel(self):
        return self._source

    def setSourceModel(self, model):
        self.beginResetModel()
        self._source = model
        model.modelReset.connect(self._source_reset)
        model.layoutAboutToBeChanged.connect(self._source_reordering)
        model.layoutChanged.connect(self._source_reordered)
        model.dataChanged.connect(self._source_changed)
        self._fields = None
        self._update()
        self.endResetModel()

    def set_filters(
        self, errors_only=None, gold=..., predicted=..., low=None, high=None, only=...
    ):
        """Changes the filters named (the others stay) and updates the view once;
        `only` is a boolean array over the records (file order), or None for all."""
        self.beginResetModel()
        if only is not ...:
            self.only = None if only is None else numpy.asarray(only, dtype=bool)
        if errors_only is not None:
            self.errors_only = bool(errors_only)
        if gold is not ...:
            self.gold = gold
        if predicted is not ...:
            self.predicted = predicted
        if low is not None:
            self.low = float(low)
        if high is not None:
            self.high = float(high)
        self._update()
        self.endResetModel()

    def clear_filters(self):
        """Shows every row."""
        self.set_filters(errors_only=False, gold=None, predicted=None, low=0.0, high=1.0)

    def shown_rows(self):
        """The rows in view (dicts), in the view's order."""
        records = self._source.records
        return [records[position] for position in self._records_shown]

    def mapToSource(self, index):
        """The source's index of the cell `index` of this view."""
        if not index.isValid():
            return QModelIndex()
        return self._source.index(int(self._shown[index.row()]), index.column())

    # Qt asks for the counts thousands of times a paint where many rows are selected.
    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self._row_count

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else self._column_count

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        row = index.row()
        if not 0 <= row < len(self._records_shown):
            return None
        return self._record_data(self._records[self._records_shown[row]], index.column(), role)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        return self._source.headerData(section, orientation, role)

    def sort(self, column, order=Qt.SortOrder.AscendingOrder):
        # The source sorts its rows (fast); this view keeps their order.
        self._source.sort(column, order)

    def _source_reset(self):
        self.beginResetModel()
        self._fields = None
        self._update()
        self.endResetModel()

    def _source_changed(self, *_):
        # A record replaced in place (an edited example): it keeps its row until the
        # filters change; its values are read again then.
        self._records = self._source.records
        self._fields = None
        if self._row_count:
            last = self.index(self._row_count - 1, self._column_count - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    def _source_reordering(self, *_):
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        self._kept = [
            (index, self._records_shown[index.row()]) for index in persistent if index.isValid()
        ]

    def records_at(self, rows):
        """The positions in file order of the records shown in the view's `rows` (an
        array or list of row numbers)."""
        return self._shown_records_array()[numpy.asarray(rows, dtype=int)]

    def rows_of(self, records):
        """The view's rows showing `records` (positions in file order), ascending (an
        array); the records out of view have none."""
        rows = self._places()[numpy.asarray(records, dtype=int)]
        return numpy.sort(rows[rows >= 0])

    def _places(self):
        # Each record's row in the view, -1 where it is out of view.
        place = numpy.full(len(self._records), -1)
        place[self._shown_records_array()] = numpy.arange(len(self._records_shown))
        return place

    def _source_reordered(self, *_):
        self._update()
        # Where each record of a kept index (a selection, the current cell) is now.
        place = self._places()
        self.changePersistentIndexList(
            [index for index, _ in self._kept],
            [self.index(int(place[record]), index.column()) for index, record in self._kept],
        )
        self._kept = []
        self.layoutChanged.emit()

    def _shown_records_array(self):
        return self._source.order[self._shown]

    def _update(self):
        records = self._records = self._source.records
        self._record_data = self._source.record_data
        if self._fields is None:
            self._fields = _fields(records)
        correct, golds, predictions, probability = self._fields
        passes = numpy.ones(len(records), dtype=bool)
        if self.errors_only:
            passes &= ~correct
        if self.only is not None:
            passes &= self.only
        if self.gold is not None:
            passes &= numpy.fromiter((gold == self.gold for gold in golds), bool, len(golds))
        if self.predicted is not None:
            passes &= numpy.fromiter(
                (value == self.predicted for value in predictions), bool, len(predictions)
            )
        full_range = self.low <= 0.0 and self.high >= 1.0
        with numpy.errstate(invalid="ignore"):
            in_range = (self.low <= probability) & (probability <= self.high)
        passes &= numpy.where(numpy.isnan(probability), full_range, in_range)
        self._shown = numpy.flatnonzero(passes[self._source.order])
        self._records_shown = self._shown_records_array().tolist()
        self._row_count = len(self._records_shown)
        self._column_count = self._source.columnCount()


def _fields(records):
    """What the filters look at, one entry per record: whether it is right (a mask),
    its gold and predicted values, its probability (NaN where it has none)."""
    correct = numpy.fromiter((bool(record["correct"]) for record in records), bool, len(records))
    probabilities = [record["probability"] for record in records]
    probability = numpy.array(
        [numpy.nan if value is None else value for value in probabilities], dtype=float
    )
    golds = [record["gold"] for record in records]
    predictions = [record["predicted"] for record in records]
    return correct, golds, predictions, probability
