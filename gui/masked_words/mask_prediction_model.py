"""A Qt table model of the rows listed for one [MASK]: candidate tokens or named words."""

from PySide6.QtCore import QAbstractTableModel
from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush
from PySide6.QtGui import QColor

from kbert_gui.masked_words.masked_words_format import row_label
from kbert_gui.masked_words.masked_words_format import row_replacement
from kbert_gui.masked_words.masked_words_format import rows_of
from kbert_gui.widgets import style
from kbert_gui.widgets.probability_text import probability_text

# The probability (a float in [0, 1], or None) of a row, for `ProbabilityBarDelegate`.
PROBABILITY_ROLE = Qt.ItemDataRole.UserRole + 1
# The row's `kbert.inference.MaskPrediction` (or `WordScore`).
PREDICTION_ROLE = Qt.ItemDataRole.UserRole + 2
# Rows the compared model does not list for this mask.
DIFFERENT_BACKGROUND = QColor(style.DIFFERS_BACKGROUND)

TOKEN_COLUMN = 0
PROBABILITY_COLUMN = 1


class MaskPredictionModel(QAbstractTableModel):
    """Rows are the candidates of one `MaskFill`, most probable first, or the named
    words of one `MaskWordScores` ("Score these words"), most probable first.

    Columns: the token (a continuation piece keeps its "##", as in the vocabulary)
    or word, and its probability ("41.2 %"; the float under `PROBABILITY_ROLE`; "—"
    for a word that cannot be scored, its tooltip says why). Every cell holds the
    `MaskPrediction` or `WordScore` under `PREDICTION_ROLE`. Rows that the compared
    model does not list (`set_unshared`) have a light orange background.

    Args:
        parent: the owning QObject.
    """

    HEADERS = ("Token", "Probability")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._mask = None
        self._rows = ()
        self._unshared = frozenset()

    @property
    def mask(self):
        """The shown `MaskFill` (or `MaskWordScores`), or None."""
        return self._mask

    def set_mask(self, mask):
        """Shows the rows of `mask` (a `kbert.inference.MaskFill`, a `MaskWordScores`, or
        None)."""
        self.beginResetModel()
        self._mask = mask
        self._rows = rows_of(mask) if mask is not None else ()
        self._unshared = frozenset()
        self.endResetModel()

    def set_unshared(self, labels):
        """Marks the rows whose token (or word) is among `labels`."""
        self._unshared = frozenset(labels)
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 1))

    def unshared_rows(self):
        """The rows marked by `set_unshared`."""
        return [row for row, item in enumerate(self._rows) if row_label(item) in self._unshared]

    def prediction(self, row):
        """The `MaskPrediction` (or `WordScore`) of `row`."""
        return self._rows[row]

    def replacement(self, row):
        """The text that `row` puts in place of the mask: its token without "##"."""
        return row_replacement(self.prediction(row))

    # --- QAbstractTableModel ----------------------------------------------------------

    def rowCount(self, parent=None):
        if parent is not None and parent.isValid():
            return 0
        return len(self._rows)

    def columnCount(self, parent=None):
        return 0 if parent is not None and parent.isValid() else len(self.HEADERS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        prediction = self.prediction(index.row())
        probability = prediction.probability
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == TOKEN_COLUMN:
                return row_label(prediction)
            return "—" if probability is None else probability_text(probability)
        if role == PROBABILITY_ROLE:
            return None if probability is None else float(probability)
        if role == PREDICTION_ROLE:
            return prediction
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(prediction)
        if role == Qt.ItemDataRole.BackgroundRole and row_label(prediction) in self._unshared:
            return QBrush(DIFFERENT_BACKGROUND)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column == PROBABILITY_COLUMN:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _tooltip(self, prediction):
        unshared = (
            "\nThe compared model does not list it here."
            if row_label(prediction) in self._unshared
            else ""
        )
        if not hasattr(prediction, "word"):
            return (
                f"{prediction.token!r} (id {prediction.token_id}): "
                f"{probability_text(prediction.probability)}. Click to put "
                f"{row_replacement(prediction)!r} into the text.{unshared}"
            )
        if prediction.probability is None:
            return f"{prediction.word!r} cannot be scored here: {prediction.reason}."
        pieces = prediction.pieces
        how = (
            f"the product of its {len(pieces)} pieces' probabilities ({' '.join(pieces)}), "
            "each given the ones before it"
            if len(pieces) > 1
            else "one token of the vocabulary"
        )
        return (
            f"{prediction.word!r}: {probability_text(prediction.probability)}, {how}. Click to put "
            f"it into the text.{unshared}"
        )

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
