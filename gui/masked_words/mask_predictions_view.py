"""One model's predictions for every [MASK] of a text: one list per mask."""

from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QFrame
from PySide6.QtWidgets import QGroupBox
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QScrollArea
from PySide6.QtWidgets import QTableView
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.masked_words.mask_prediction_model import PROBABILITY_COLUMN
from kbert_gui.masked_words.mask_prediction_model import PROBABILITY_ROLE
from kbert_gui.masked_words.mask_prediction_model import MaskPredictionModel
from kbert_gui.masked_words.masked_words_format import fresh_heads_warning
from kbert_gui.masked_words.masked_words_format import same_word_notes
from kbert_gui.masked_words.masked_words_format import top_differences
from kbert_gui.masked_words.masked_words_format import truncation_note
from kbert_gui.widgets import style
from kbert_gui.widgets.error_banner import ErrorBanner
from kbert_gui.widgets.probability_bar_delegate import ProbabilityBarDelegate
from kbert_gui.widgets.warning_banner import WarningBanner

# A list taller than this many rows scrolls.
VISIBLE_ROWS = 10


class MaskPredictionsView(QWidget):
    """A titled column: for each mask of a `FillMaskOutcome`, its candidates (or the
    named words' scores) with probability bars, under the label "mask 1 at chars a–b".

    Also shows, in place of the lists, a hint (no mask yet), an inline error, a
    warning when the model's masked-LM head was initialised at random, and notes: a
    text longer than the model reads, named words the model cannot tell apart.
    `set_comparison(other)` marks where another model's predictions for the same
    text differ: the mask's title says so when the top predictions differ, and rows
    the other model does not list have an orange background.

    Signals:
        prediction_chosen(str, int, int, str): the user clicked a candidate:
            `(text, start, end, replacement)`, where `text` is the text the
            predictions are for and `text[start:end]` the mask to replace.

    Args:
        title: the heading (the model's name).
        parent: the parent widget.
    """

    prediction_chosen = Signal(str, int, int, str)

    def __init__(self, title="", parent=None):
        super().__init__(parent)
        self._outcome = None
        self._groups = []
        self._tables = []
        self._models = []

        self.title_label = QLabel(title)
        self.title_label.setObjectName("predictionsTitle")
        font = self.title_label.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.title_label.setFont(font)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.hint_label = QLabel()
        self.hint_label.setObjectName("predictionsHint")
        self.hint_label.setWordWrap(True)
        self.hint_label.setStyleSheet(style.PLACEHOLDER_STYLE)
        self.hint_label.hide()

        self.warning_banner = WarningBanner()

        self.note_label = QLabel()
        self.note_label.setObjectName("predictionsNote")
        self.note_label.setWordWrap(True)
        self.note_label.setStyleSheet(style.NOTE_STYLE)
        self.note_label.hide()

        self.error_banner = ErrorBanner()

        self._masks_widget = QWidget()
        self._masks_layout = QVBoxLayout(self._masks_widget)
        self._masks_layout.setContentsMargins(0, 0, 4, 0)
        self._masks_layout.setSpacing(10)
        self._masks_layout.addStretch(1)
        scroll_area = QScrollArea()
        scroll_area.setWidgetResizable(True)
        scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        scroll_area.setWidget(self._masks_widget)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.title_label)
        layout.addWidget(self.warning_banner)
        layout.addWidget(self.note_label)
        layout.addWidget(self.error_banner)
        layout.addWidget(self.hint_label)
        layout.addWidget(scroll_area, 1)

    # --- What tests and the tab read --------------------------------------------------

    @property
    def outcome(self):
        """The shown `FillMaskOutcome`, or None."""
        return self._outcome

    def mask_count(self):
        return len(self._tables) if self._outcome is not None else 0

    def mask_title(self, index):
        return self._groups[index].title()

    def table(self, index):
        """The `QTableView` of mask `index`."""
        return self._tables[index]

    def model(self, index):
        """The `MaskPredictionModel` of mask `index`."""
        return self._models[index]

    @property
    def hint(self):
        return self.hint_label.text() if not self.hint_label.isHidden() else ""

    @property
    def warning(self):
        return self.warning_banner.message

    @property
    def note(self):
        return self.note_label.text() if not self.note_label.isHidden() else ""

    def differing_masks(self):
        """Indices of the masks whose top prediction the compared model does not share."""
        groups = self._groups[: self.mask_count()]
        return [index for index, group in enumerate(groups) if group.property("differs")]

    # --- Showing ----------------------------------------------------------------------

    def set_title(self, title):
        self.title_label.setText(title)

    def show_outcome(self, outcome):
        """Shows a `FillMaskOutcome`: its lists, and a warning for random heads."""
        self.error_banner.clear_error()
        self.hint_label.hide()
        if outcome.fresh_heads:
            self.warning_banner.show_warning(
                fresh_heads_warning(outcome.source, outcome.fresh_heads)
            )
        else:
            self.warning_banner.clear_warning()
        notes = [truncation_note(outcome.num_tokens, outcome.limit, "predictions")]
        for mask in outcome.word_scores[:1]:
            notes.extend(same_word_notes(mask))
        self.note_label.setText("\n".join(note for note in notes if note))
        self.note_label.setVisible(bool(self.note_label.text()))
        self._show_outcome(outcome)

    def set_comparison(self, other):
        """Marks where `other` (the compared model's `FillMaskOutcome`, or None) differs."""
        differences = top_differences(self._outcome, other) if self._outcome else {}
        for index, mask in enumerate(self._outcome.masks if self._outcome else ()):
            top_differs, unshared = differences.get(mask.start, (False, ()))
            group = self._groups[index]
            title = f"mask {index + 1} at chars {mask.start}–{mask.end}"
            group.setTitle(title + (" · the other model's top differs" if top_differs else ""))
            group.setProperty("differs", top_differs)
            group.setStyleSheet(style.DIFFERS_TITLE_STYLE if top_differs else "")
            self._models[index].set_unshared(unshared)

    def show_hint(self, message):
        """Clears the lists and shows `message` where they were."""
        self.clear()
        self.hint_label.setText(message)
        self.hint_label.show()

    def show_error(self, message):
        """Clears the lists (they would be stale) and shows `message` inline."""
        self.clear()
        self.error_banner.show_error(message)

    def clear(self):
        """Removes lists, hint, warning, notes and error."""
        self._show_outcome(None)
        self.hint_label.hide()
        self.warning_banner.clear_warning()
        self.note_label.hide()
        self.error_banner.clear_error()

    def _show_outcome(self, outcome):
        self._outcome = outcome
        masks = outcome.masks if outcome is not None else ()
        while len(self._groups) > len(masks):
            group = self._groups.pop()
            self._tables.pop()
            self._models.pop()
            # Hidden and detached now; deleted when control returns to the event loop.
            self._masks_layout.removeWidget(group)
            group.hide()
            group.deleteLater()
        while len(self._groups) < len(masks):
            self._add_group()
        for index, mask in enumerate(masks):
            self._models[index].set_mask(mask)
            self._fit_height(self._tables[index], self._models[index].rowCount())
        self.set_comparison(None)

    def _add_group(self):
        model = MaskPredictionModel(self)
        table = QTableView()
        table.setObjectName(f"maskPredictions{len(self._tables)}")
        table.setModel(model)
        table.setItemDelegateForColumn(
            PROBABILITY_COLUMN, ProbabilityBarDelegate(PROBABILITY_ROLE, parent=table)
        )
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setShowGrid(False)
        table.setAlternatingRowColors(True)
        table.setCursor(Qt.CursorShape.PointingHandCursor)
        table.setToolTip("Click a prediction (or press Enter) to put it into the text.")
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(26)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.clicked.connect(self._choose)
        table.activated.connect(self._choose)

        group = QGroupBox()
        group_layout = QVBoxLayout(group)
        group_layout.setContentsMargins(8, 6, 8, 8)
        group_layout.addWidget(table)
        self._masks_layout.insertWidget(self._masks_layout.count() - 1, group)
        self._groups.append(group)
        self._tables.append(table)
        self._models.append(model)

    @staticmethod
    def _fit_height(table, rows):
        visible = max(1, min(rows, VISIBLE_ROWS))
        height = (
            table.horizontalHeader().sizeHint().height()
            + visible * table.verticalHeader().defaultSectionSize()
            + 2 * table.frameWidth()
        )
        table.setFixedHeight(height)

    @Slot(object)
    def _choose(self, index):
        if self._outcome is None or not index.isValid():
            return
        model = index.model()
        mask = model.mask
        self.prediction_chosen.emit(
            self._outcome.text, mask.start, mask.end, model.replacement(index.row())
        )
