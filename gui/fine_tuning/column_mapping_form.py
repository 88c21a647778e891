"""Which column of a CSV/TSV/JSON Lines file holds the text, the second text and the label."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QWidget

# Usual column names, most likely first (GLUE, SNLI, IMDb, Hugging Face datasets).
TEXT_NAMES = ("text", "sentence", "sentence1", "premise", "question", "review", "content", "text_a")
PAIR_NAMES = ("pair", "sentence2", "hypothesis", "text_b", "text_pair", "second", "answer")
LABEL_NAMES = ("label", "labels", "class", "category", "target", "gold_label", "y")
# What the label box and the preview say while no label column is chosen.
CHOOSE_LABEL = (
    "Choose the label column: no column is named like one "
    f"({', '.join(LABEL_NAMES[:4])}, …), and training on a text column would learn nothing."
)


class ColumnMappingForm(QWidget):
    """Three combo boxes mapping the file's columns to text, text pair and label.

    `set_columns(columns)` offers a file's columns and guesses the mapping from their
    names; `mapping()` returns it as `kbert.data.read_classification` and
    `kbert.finetuning.make_recipe` take it: column names, or 0-based positions for a
    CSV/TSV file without a header row. The label is never guessed from a column's
    position: without a column named like one it stays unchosen (`label_column` None)
    until the user picks it. The pair row shows only for text-pair classification
    (`set_pair_visible`).

    Signals:
        mapping_changed(): the user (or `set_columns`) changed the mapping.
        header_changed(bool): the "first row is a header" box was toggled.
    """

    mapping_changed = Signal()
    header_changed = Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._columns = ()
        self._filling = False
        # Column names to choose once a file offers them (`set_mapping` before its columns).
        self._wanted = {}
        self.text_box = self._combo("textColumn", "The column holding the text to classify.")
        self.pair_box = self._combo(
            "pairColumn", "The column holding the second text of each pair (e.g. the hypothesis)."
        )
        self.label_box = self._combo(
            "labelColumn", "The column holding the label; labels may be words or integers."
        )
        self.label_box.setPlaceholderText("choose the label column")
        self.header_box = QCheckBox("First row is a header")
        self.header_box.setObjectName("headerRow")
        self.header_box.setChecked(True)
        self.header_box.setToolTip(
            "Whether the first row of a CSV/TSV file names the columns. Without a header, "
            "columns are picked by position. JSON Lines records are always read by key."
        )
        self.header_box.toggled.connect(self.header_changed)

        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow("Text column:", self.text_box)
        layout.addRow("Pair column:", self.pair_box)
        layout.addRow("Label column:", self.label_box)
        layout.addRow("", self.header_box)
        self._layout = layout

    def _combo(self, name, tooltip):
        return column_box(name, tooltip, self._changed)

    def _changed(self):
        if not self._filling:
            self.mapping_changed.emit()

    def set_pair_visible(self, visible):
        """Shows the pair row (text-pair classification) or hides it."""
        self._layout.setRowVisible(self.pair_box, visible)
        self.mapping_changed.emit()

    def set_header_option_visible(self, visible):
        """Shows the header checkbox (CSV/TSV) or hides it (JSON Lines)."""
        self._layout.setRowVisible(self.header_box, visible)

    def has_header(self):
        return self.header_box.isChecked()

    def columns(self):
        return self._columns

    def set_columns(self, columns):
        """Offers `columns`, keeping the current choices where the names still exist."""
        columns = tuple(columns)
        if columns == self._columns:
            return
        previous = {
            box: self._wanted.get(box, box.currentText())
            for box in (self.text_box, self.pair_box, self.label_box)
        }
        self._wanted = {}
        self._filling = True
        try:
            self._columns = columns
            for box, names, fallback in (
                (self.text_box, TEXT_NAMES, 0),
                (self.pair_box, PAIR_NAMES, 1),
                (self.label_box, LABEL_NAMES, None),
            ):
                box.clear()
                box.addItems(columns)
                box.setCurrentIndex(guess_column(columns, previous[box], names, fallback))
        finally:
            self._filling = False
        self.mapping_changed.emit()

    def set_mapping(self, mapping):
        """Selects the columns of `mapping` (as `mapping()` returns it); names the file
        does not offer yet are chosen when it does (`set_columns`)."""
        for box, field in (
            (self.text_box, "text_column"),
            (self.pair_box, "pair_column"),
            (self.label_box, "label_column"),
        ):
            column = mapping.get(field)
            if isinstance(column, int) and 0 <= column < box.count():
                box.setCurrentIndex(column)
            elif isinstance(column, str):
                self._wanted[box] = column
                if box.findText(column) >= 0:
                    box.setCurrentIndex(box.findText(column))

    def mapping(self):
        """`{"text_column", "pair_column", "label_column"}`: names, or positions without
        a header row; `pair_column` is None unless the pair row is shown. None while
        there are no columns."""
        if not self._columns:
            return None
        by_position = not self.header_box.isChecked() and self._layout.isRowVisible(self.header_box)

        def column(box):
            if box.currentIndex() < 0:
                return None
            return box.currentIndex() if by_position else box.currentText()

        pair_visible = self._layout.isRowVisible(self.pair_box)
        return {
            "text_column": column(self.text_box),
            "pair_column": column(self.pair_box) if pair_visible else None,
            "label_column": column(self.label_box),
        }


def column_box(name, tooltip, changed):
    """A combo box of a file's columns, named `name`, calling `changed` on each choice."""
    box = QComboBox()
    box.setObjectName(name)
    box.setToolTip(tooltip)
    box.setMinimumContentsLength(12)
    box.currentIndexChanged.connect(changed)
    return box


def guess_column(columns, previous, names, fallback):
    """The index of `columns` to select: the previous choice, else the first of the
    usual `names` (lower case) among them, else `fallback` (None: nothing, -1)."""
    if previous in columns:
        return columns.index(previous)
    lowered = [column.lower() for column in columns]
    for name in names:
        if name in lowered:
            return lowered.index(name)
    if fallback is None or not columns:
        return -1
    return min(max(fallback, 0), len(columns) - 1)
