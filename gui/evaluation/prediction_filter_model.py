"""Which evaluation rows are in view: errors only, a gold or predicted class, a confidence range."""

from PySide6.QtCore import QSortFilterProxyModel
from PySide6.QtCore import Qt



class PredictionFilterModel(QSortFilterProxyModel):
    """A sortable, filtered view of a `PredictionTableModel` (which sorts its own rows).

    A row is in view when it passes every filter that is set: `errors_only` (the
    prediction is wrong), `gold` and `predicted` (the row's gold / predicted value
    equals it; None: any), and the confidence range `low` <= probability <= `high`
    (rows without a probability pass only the full range).

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.errors_only = False
        self.gold = None
        self.predicted = None
        self.low, self.high = 0.0, 1.0
        self._accepted = None

    def set_filters(self, errors_only=None, gold=..., predicted=..., low=None, high=None):
        """Changes the filters named (the others stay) and updates the view once."""
        # Qt 6.9 replaced invalidateFilter by this pair; 6.6 to 6.8 have only the former.
        changing = hasattr(self, "beginFilterChange")
        if changing:
            self.beginFilterChange()
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
        self._accepted = None
        if changing:
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateFilter()

    def clear_filters(self):
        """Shows every row."""
        self.set_filters(errors_only=False, gold=None, predicted=None, low=0.0, high=1.0)

    def shown_rows(self):
        """The rows in view (dicts), in the view's order."""
        source = self.sourceModel()
        return [
            source.row(self.mapToSource(self.index(row, 0)).row()) for row in range(self.rowCount())
        ]

    def sort(self, column, order=Qt.SortOrder.AscendingOrder):
        # The source sorts its rows (fast); this proxy keeps their order.
        self.sourceModel().sort(column, order)

    def setSourceModel(self, model):
        super().setSourceModel(model)
        # Rows reordered or replaced: the answers per row are computed again when asked.
        model.modelReset.connect(self._forget_accepted)
        model.layoutAboutToBeChanged.connect(self._forget_accepted)

    def _forget_accepted(self, *_):
        self._accepted = None

    def filterAcceptsRow(self, source_row, source_parent):
        # Qt asks row by row; the answers for all rows come from one loop, so 10,000
        # rows cost one Python call each, not one per filter and field.
        if self._accepted is None:
            self._accepted = [self._accepts(row) for row in self.sourceModel().rows()]
        return self._accepted[source_row]

    def _accepts(self, row):
        if self.errors_only and row["correct"]:
            return False
        if self.gold is not None and row["gold"] != self.gold:
            return False
        if self.predicted is not None and row["predicted"] != self.predicted:
            return False
        probability = row["probability"]
        if probability is None:
            return self.low <= 0.0 and self.high >= 1.0
        return self.low <= probability <= self.high
