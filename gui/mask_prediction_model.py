"""A Qt table model of the candidate tokens for one [MASK]."""

from PySide6.QtCore import QAbstractTableModel
from PySide6.QtCore import Qt

from kbert.tokenizer.bert_tokenizer import display_token

# The probability (a float in [0, 1]) of a row, for `ProbabilityBarDelegate`.
PROBABILITY_ROLE = Qt.ItemDataRole.UserRole + 1
# The row's `kbert.inference.MaskPrediction`.
PREDICTION_ROLE = Qt.ItemDataRole.UserRole + 2

TOKEN_COLUMN = 0
PROBABILITY_COLUMN = 1


class MaskPredictionModel(QAbstractTableModel):
    """Rows are the candidates of one `MaskFill`, most probable first.

    Columns: the token (a continuation piece keeps its "##", as in the vocabulary)
    and its probability ("41.2 %"; the float under `PROBABILITY_ROLE`). Every cell
    holds the `MaskPrediction` under `PREDICTION_ROLE`.

    Args:
        parent: the owning QObject.
    """

    HEADERS = ("Token", "Probability")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._mask = None

    @property
    def mask(self):
        """The shown `MaskFill`, or None."""
        return self._mask

    def set_mask(self, mask):
        """Shows the candidates of `mask` (a `kbert.inference.MaskFill`, or None)."""
        self.beginResetModel()
        self._mask = mask
        self.endResetModel()

    def prediction(self, row):
        """The `MaskPrediction` of `row`."""
        return self._mask.candidates[row]

    def replacement(self, row):
        """The text that `row` puts in place of the mask: its token without "##"."""
        return display_token(self.prediction(row).token)

    # --- QAbstractTableModel ----------------------------------------------------------

    def rowCount(self, parent=None):
        if (parent is not None and parent.isValid()) or self._mask is None:
            return 0
        return len(self._mask.candidates)

    def columnCount(self, parent=None):
        return 0 if parent is not None and parent.isValid() else len(self.HEADERS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        prediction = self.prediction(index.row())
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == TOKEN_COLUMN:
                return prediction.token
            return f"{100 * prediction.probability:.1f} %"
        if role == PROBABILITY_ROLE:
            return float(prediction.probability)
        if role == PREDICTION_ROLE:
            return prediction
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"{prediction.token!r} (id {prediction.token_id}): "
                f"{100 * prediction.probability:.2f} %. Click to put "
                f"{display_token(prediction.token)!r} into the text."
            )
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column == PROBABILITY_COLUMN:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        if orientation == Qt.Orientation.Vertical and 0 <= section < self.rowCount():
            return str(section + 1)
        return None

    def flags(self, index):
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )
