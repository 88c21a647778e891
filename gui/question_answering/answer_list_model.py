"""The n-best answers of a question as a Qt table model."""

from PySide6.QtCore import QAbstractTableModel
from PySide6.QtCore import QModelIndex
from PySide6.QtCore import Qt

from kbert_gui.widgets.probability_text import probability_text

# Columns: title and header tooltip.
COLUMNS = (
    ("Answer", "The answer: the exact characters of the passage"),
    ("Score", "Start logit + end logit: how the model ranks spans"),
    ("Probability", "Softmax of the score over every possible span of the passage"),
    ("Characters", "Where the answer is in the passage: character offsets, end exclusive"),
    ("Window", "The window the answer was found in (long passages are cut into several)"),
)
ANSWER_COLUMN, SCORE_COLUMN, PROBABILITY_COLUMN, SPAN_COLUMN, WINDOW_COLUMN = range(len(COLUMNS))

# The `kbert.inference.AnswerSpan` of a row.
AnswerRole = Qt.ItemDataRole.UserRole + 1


class AnswerListModel(QAbstractTableModel):
    """Rows of `kbert.inference.AnswerSpan`s, best first: text, score, probability, span, window.

    `set_answers(answers)` replaces the rows; `answer_at(row)` (or `AnswerRole`) gives a
    row's `AnswerSpan`, whose `start`/`end` are Python offsets into the passage.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._answers = ()

    def set_answers(self, answers):
        """Shows `answers` (a sequence of `AnswerSpan`, best first)."""
        self.beginResetModel()
        self._answers = tuple(answers)
        self.endResetModel()

    def clear(self):
        self.set_answers(())

    def answer_at(self, row):
        """The `AnswerSpan` of `row`."""
        return self._answers[row]

    def answers(self):
        """Every shown `AnswerSpan`, in row order."""
        return self._answers

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self._answers)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._answers):
            return None
        answer = self._answers[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return _display(answer, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"“{answer.text}”\ncharacters {answer.start}–{answer.end}, window "
                f"{answer.window + 1}\nscore {answer.score:.3f}, probability "
                f"{probability_text(answer.probability)} (start "
                f"{probability_text(answer.start_probability)}, end "
                f"{probability_text(answer.end_probability)})"
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and column != ANSWER_COLUMN:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == AnswerRole:
            return answer
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return COLUMNS[section][0]
            if role == Qt.ItemDataRole.ToolTipRole:
                return COLUMNS[section][1]
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return str(section + 1)
        return None


def _display(answer, column):
    if column == ANSWER_COLUMN:
        # One line per row: a multi-line answer shows its line breaks as spaces.
        return " ".join(answer.text.split())
    if column == SCORE_COLUMN:
        return f"{answer.score:.2f}"
    if column == PROBABILITY_COLUMN:
        return probability_text(answer.probability)
    if column == SPAN_COLUMN:
        return f"{answer.start}–{answer.end}"
    if column == WINDOW_COLUMN:
        return str(answer.window + 1)
    return None
