"""The trials of a fine-tuning search: one row per finished trial, the best in bold."""

from PySide6.QtCore import Qt

from kbert_gui.fine_tuning.evaluation_table_model import NUMBER_ROLES
from kbert_gui.fine_tuning.evaluation_table_model import TITLES
from kbert_gui.fine_tuning.evaluation_table_model import format_value
from kbert_gui.fine_tuning.evaluation_table_model import number_cell_style
from kbert_gui.services.score_words import metric_name
from kbert_gui.widgets.row_table_model import RowTableModel

# Keys of a `FineTuningSearch` row that are not the trial's point; the point is what
# the row holds between "trial" and "restart".
_AFTER_POINT = "restart"
_TITLES = {**TITLES, "trial": "Trial", "seed": "Seed", "time_s": "Time (s)", "best_epoch": "Best epoch"}


class SearchTrialsModel(RowTableModel):
    """Rows of `FineTuningSearch` trials (`on_trial_end(row)`, `SearchResult.trials`).

    Columns: the trial's number (from 1, as the search's log counts them), its
    hyperparameters, seed, the dev metric of its best epoch, that epoch and its time.
    Rows are sorted by trial number; a trial reported again replaces its row. The best
    trial (highest metric; the earlier one on a tie, as the search picks it) is bold on
    the best-row background.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._metric = None
        self._best_row = None
        self.in_percent = False

    def start(self, metric, in_percent=False):
        """Empties the table for a search ranked by `metric` (`in_percent`: the scores
        are percentages already, as SQuAD's)."""
        self.beginResetModel()
        self._metric, self._rows, self._columns, self._best_row = metric, (), (), None
        self.in_percent = in_percent
        self.endResetModel()

    def set_rows(self, rows):
        """Shows `rows` (a `SearchResult`'s trials)."""
        self.beginResetModel()
        by_trial = {row["trial"]: dict(row) for row in rows}
        self._rows = tuple(by_trial[trial] for trial in sorted(by_trial))
        self._columns = self._columns_of(self._rows)
        self._best_row = self._best()
        self.endResetModel()

    def add_row(self, row):
        """Adds (or replaces) one finished trial."""
        self.set_rows([*(old for old in self._rows if old["trial"] != row["trial"]), row])

    def clear(self):
        self.start(self._metric, self.in_percent)

    @property
    def metric(self):
        return self._metric

    @property
    def best_row(self):
        """The index of the best trial's row, or None."""
        return self._best_row

    @property
    def keys(self):
        return self._columns

    def records(self):
        return [dict(row) for row in self._rows]

    def _columns_of(self, rows):
        if not rows:
            return ()
        keys = list(rows[0])
        point = keys[1 : keys.index(_AFTER_POINT)] if _AFTER_POINT in keys else []
        tail = [key for key in ("seed", self._metric, "best_epoch", "time_s") if key]
        return ("trial", *point, *tail)

    def _best(self):
        scored = [
            (row.get(self._metric), -row["trial"], index)
            for index, row in enumerate(self._rows)
            if row.get(self._metric) is not None
        ]
        return max(scored)[2] if scored else None

    def cell_data(self, row, column, role):
        key = self._columns[column]
        record = self._rows[row]
        value = record.get(key)
        best = row == self._best_row
        if role == Qt.ItemDataRole.DisplayRole:
            return str(value + 1) if key == "trial" else format_value(key, value, self.in_percent)
        if role in NUMBER_ROLES:
            return number_cell_style(role, best)
        if role == Qt.ItemDataRole.ToolTipRole:
            where = f"{record.get('folder', '')}"
            reason = ""
            if best:
                reason = f"\nBest {metric_name(self._metric)}: its model is the search's."
            return f"{where}{reason}".strip() or None
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self._columns):
            key = self._columns[section]
            return _TITLES.get(key, key.replace("_", " ").capitalize())
        return None
