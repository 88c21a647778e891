"""The "Masked words" attention views: a heat map, every head of a layer, the head view,
every layer and head at once."""

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QScrollArea
from PySide6.QtWidgets import QStackedWidget
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert.model_table import class_with_verb
from kbert_gui.masked_words.attention_head_grid import AttentionHeadGrid
from kbert_gui.masked_words.attention_head_view import AttentionHeadView
from kbert_gui.masked_words.attention_heat_map import AttentionHeatMap
from kbert_gui.masked_words.attention_model_view import AttentionModelView
from kbert_gui.widgets.error_banner import ErrorBanner
from kbert_gui.masked_words.masked_words_format import display_name
from kbert_gui.masked_words.masked_words_format import truncation_note
from kbert_gui.services.latest_request_runner import TYPING_DELAY_MS
from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.widgets import style

AVERAGE_OF_LAYERS = "average of layers"
AVERAGE_OF_HEADS = "average of heads"
# The views, in the "View" box's order.
HEAT_MAP, ALL_HEADS, HEAD_VIEW, MODEL_VIEW = range(4)
VIEW_NAMES = ("Heat map", "All heads of the layer", "Head view (lines)", "Every layer and head")
# The model view's segment choices: None is every token; a pair of segment ids (those of
# `AttentionMap`: 0 for A, the text before [SEP], 1 for B, the text after it) is how
# the first segment's tokens attend to the second's.
SEGMENT_CHOICES = (("all tokens", None), ("A → B", (0, 1)), ("B → A", (1, 0)))
NO_PAIR_HINT = "Type [SEP] between two sentences to see how each attends to the other."


@dataclass(frozen=True)
class _AttentionReport:
    """A worker's `AttentionMap`, with the text's length and the model's limit."""

    attention: object
    num_tokens: int
    limit: int


class AttentionPanel(QWidget):
    """Layer, head and view choices over four views of the current text's attention.

    "Heat map" is an `AttentionHeatMap` of one layer and head (or their averages);
    "All heads of the layer" an `AttentionHeadGrid` of thumbnails, one per head
    (click one to enlarge it in the heat map); "Head view" an `AttentionHeadView` of
    token-to-token lines; "Every layer and head" an `AttentionModelView` of a
    thumbnail per layer and head (click one to open it in the heat map). Hovering
    any of them shows the weights. A text longer than the model reads is cut at its
    limit, and a note says so.

    A text with `[SEP]` in it is read as a pair of sentences, A before the first
    `[SEP]` and B after it, packed as BERT reads pairs (`[CLS] A [SEP] B [SEP]`, B
    in segment 1); the model view's "Segments" choice then shows how A's tokens
    attend to B's, or B's to A's.

    The weights come from `kbert.inference.attention_map` on the current model,
    computed in a worker, and only while the panel is visible: `set_text` while it
    is hidden just remembers the text, so typing stays fast; showing the panel
    computes the map of the latest text. The views draw from the map on the UI
    thread with vectorised images and batched lines, a few milliseconds for a text
    of 128 tokens.

    Args:
        context: the `AppContext`.
        delay_ms: debounce pause before a computation starts.
        parent: the parent widget.
    """

    def __init__(self, context, delay_ms=TYPING_DELAY_MS, parent=None):
        super().__init__(parent)
        self.setObjectName("attentionPanel")
        self.context = context
        self._text = ""
        self._computed_text = None
        self._attention = None
        self._num_tokens = 0

        self.runner = LatestRequestRunner(context.inference_pool, delay_ms, self)
        self.runner.result.connect(self._show_attention)
        self.runner.error.connect(self._show_error)
        self.runner.busy_changed.connect(self._show_busy)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(self._build_controls())
        self.error_banner = ErrorBanner()
        layout.addWidget(self.error_banner)
        layout.addWidget(self._build_note())
        layout.addWidget(self._build_views(), 1)
        context.models.source_changed.connect(self._forget_model)

    def _build_controls(self):
        """The layer, head and view choices, and the busy line."""
        self.layer_combo = QComboBox()
        self.layer_combo.setObjectName("layerCombo")
        self.layer_combo.setToolTip(
            "The encoder layer whose attention is shown (1 is nearest the input), or the "
            "average of all layers."
        )
        self.head_combo = QComboBox()
        self.head_combo.setObjectName("headCombo")
        self.head_combo.setToolTip("The attention head shown, or the average of all heads.")
        for combo in (self.layer_combo, self.head_combo):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.view_combo = QComboBox()
        self.view_combo.setObjectName("attentionViewCombo")
        self.view_combo.addItems(VIEW_NAMES)
        self.view_combo.setToolTip(
            "Heat map: one head's weights, rows attending to columns. All heads: a "
            "thumbnail per head of the layer (click one to enlarge). Head view: lines "
            "from each token to those it attends to; hover a token for its weights. "
            "Every layer and head: a thumbnail each (click one to open it)."
        )
        self.segment_combo = QComboBox()
        self.segment_combo.setObjectName("segmentCombo")
        for name, segments in SEGMENT_CHOICES:
            self.segment_combo.addItem(name, segments)
        self.segment_combo.setToolTip(
            "For two sentences separated by [SEP]: how the tokens of A (before [SEP]) "
            "attend to those of B, or B's to A's, in every layer and head."
        )
        self.layer_combo.currentIndexChanged.connect(self._redraw)
        self.head_combo.currentIndexChanged.connect(self._redraw)
        self.segment_combo.currentIndexChanged.connect(self._redraw)
        self.view_combo.currentIndexChanged.connect(self._show_view)
        self.busy_label = QLabel("Computing attention…")
        self.busy_label.setStyleSheet(style.BUSY_STYLE)
        self.busy_label.hide()

        controls = QHBoxLayout()
        controls.setSpacing(8)
        # A label and its box in one widget, so that a hidden pair leaves no gap.
        self.layer_group, self.head_group, view_group, self.segment_group = (
            _labelled(text, combo)
            for text, combo in (
                ("Layer", self.layer_combo),
                ("Head", self.head_combo),
                ("View", self.view_combo),
                ("Segments", self.segment_combo),
            )
        )
        for group in (self.layer_group, self.head_group, view_group, self.segment_group):
            controls.addWidget(group)
        # The model view's choice, shown in place of the layer and head boxes there.
        self.segment_group.hide()
        controls.addWidget(self.busy_label)
        controls.addStretch(1)
        return controls

    def _build_note(self):
        self.note_label = QLabel()
        self.note_label.setObjectName("attentionNote")
        self.note_label.setWordWrap(True)
        self.note_label.setStyleSheet(style.HINT_STYLE)
        self.note_label.hide()
        return self.note_label

    def _build_views(self):
        """The four views, each in a scroll area, one shown at a time."""
        self.heat_map = AttentionHeatMap()
        self.head_grid = AttentionHeadGrid()
        self.head_grid.head_chosen.connect(self.enlarge_head)
        self.head_view = AttentionHeadView()
        self.model_view = AttentionModelView()
        self.model_view.head_chosen.connect(self.open_head)
        self.views = QStackedWidget()
        for view in (self.heat_map, self.head_grid, self.head_view, self.model_view):
            scroll_area = QScrollArea()
            scroll_area.setWidget(view)
            scroll_area.setWidgetResizable(False)
            scroll_area.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            self.views.addWidget(scroll_area)
        return self.views

    @property
    def attention(self):
        """The last `AttentionMap` received, or None."""
        return self._attention

    def set_text(self, text):
        """The text to show attention for; computed now if the panel is visible."""
        self._text = text
        if self.isVisible():
            self._request()

    def selection(self):
        """`(layer, head)` as `AttentionMap.select` takes them (None = average)."""
        return _chosen_index(self.layer_combo), _chosen_index(self.head_combo)

    def caption(self):
        """What the heat map shows, for its exported picture: "model · layer 2 · head 3"."""
        if self._attention is None:
            return ""
        model = display_name(self.context.models.source)
        return f"{model} · {self.layer_combo.currentText()} · {self.head_combo.currentText()}"

    def set_view(self, view):
        """Shows `HEAT_MAP`, `ALL_HEADS`, `HEAD_VIEW` or `MODEL_VIEW`."""
        self.view_combo.setCurrentIndex(view)

    @Slot(int)
    def enlarge_head(self, head):
        """A thumbnail was clicked: that head of the layer in the heat map."""
        self.head_combo.setCurrentIndex(self.head_combo.findData(head))
        self.set_view(HEAT_MAP)

    @Slot(int, int)
    def open_head(self, layer, head):
        """A thumbnail of the model view was clicked: that layer and head in the heat map."""
        self.layer_combo.setCurrentIndex(self.layer_combo.findData(layer))
        self.enlarge_head(head)

    def showEvent(self, event):
        super().showEvent(event)
        if self._computed_text != self._text:
            self._request()

    def _request(self):
        self._computed_text = self._text
        models = self.context.models
        self.runner.submit(_compute_attention, models, models.source, self._text)

    @Slot(str)
    def _forget_model(self, source):
        self.runner.cancel()
        self._attention = None
        self._clear_views()
        self._computed_text = None
        if self.isVisible():
            self._request()

    @Slot(object)
    def _show_attention(self, report):
        self.error_banner.clear_error()
        attention = report.attention
        self._attention = attention
        note = truncation_note(report.num_tokens, report.limit, "weights")
        self.note_label.setText(note)
        self.note_label.setVisible(bool(note))
        _fill_combo(self.layer_combo, "layer", attention.num_layers, AVERAGE_OF_LAYERS, 0)
        # The average of the heads reads best at first; single heads are one click away.
        heads = attention.num_heads
        _fill_combo(self.head_combo, "head", heads, AVERAGE_OF_HEADS, heads)
        self._redraw()

    @Slot(str)
    def _show_error(self, message):
        self._attention = None
        self._clear_views()
        self.error_banner.show_error(message)

    def _clear_views(self):
        self.heat_map.clear()
        self.head_grid.clear()
        self.head_view.clear()
        self.model_view.clear()
        self.note_label.hide()

    @Slot(int)
    def _show_view(self, view):
        self.views.setCurrentIndex(view)
        # The grid shows every head: the head box has nothing to choose there. The model
        # view shows every layer and head: its segment choice takes their place.
        self.head_combo.setEnabled(view != ALL_HEADS)
        model_view = view == MODEL_VIEW
        self.layer_group.setVisible(not model_view)
        self.head_group.setVisible(not model_view)
        self.segment_group.setVisible(model_view)
        self._redraw()

    @Slot(bool)
    def _show_busy(self, busy):
        self.busy_label.setVisible(busy)

    @Slot()
    def _redraw(self):
        if self._attention is None or self.layer_combo.count() == 0 or self.head_combo.count() == 0:
            return
        layer, head = self.selection()
        attention = self._attention
        view = self.view_combo.currentIndex()
        # Only the view on show is drawn; the others catch up when shown.
        if view == HEAT_MAP:
            self.heat_map.set_map(attention.tokens, attention.select(layer, head))
        elif view == ALL_HEADS:
            self.head_grid.set_layer(attention, layer)
        elif view == MODEL_VIEW:
            segments = self.segment_combo.currentData()
            if segments is not None and not attention.has_pair:
                self.model_view.show_hint(NO_PAIR_HINT)
            else:
                self.model_view.set_attention(attention, segments)
        else:
            self.head_view.set_map(attention.tokens, attention.select(layer, head))


def _compute_attention(models, source, text):
    from kbert.inference import attention_map
    from kbert.inference.model_io import sequence_limit

    model = models.model(class_with_verb("fill_mask").name, source)
    tokenizer = model.tokenizer
    # [CLS] and the last [SEP] are added; a typed [SEP] is counted by `tokenize`.
    num_tokens = len(tokenizer.tokenize(text)) + 2
    first, separator, second = text.partition(tokenizer.sep_token)
    if separator and second.strip():
        attention = attention_map(model, None, first, pair=second)
    else:
        attention = attention_map(model, None, text)
    return _AttentionReport(attention, num_tokens, sequence_limit(model, tokenizer))


def _labelled(text, combo):
    """`text` and `combo` side by side in a widget, with a gap after them."""
    group = QWidget()
    layout = QHBoxLayout(group)
    layout.setContentsMargins(0, 0, 12, 0)
    layout.setSpacing(8)
    layout.addWidget(QLabel(text))
    layout.addWidget(combo)
    return group


def _fill_combo(combo, noun, count, average_label, default_row):
    """Items "noun 1".."noun count" then the average; keeps the choice when it fits."""
    if combo.count() == count + 1:
        return
    previous_row = combo.currentIndex() if combo.count() else default_row
    was_average = combo.count() > 0 and combo.currentData() is None
    combo.blockSignals(True)
    combo.clear()
    for index in range(count):
        combo.addItem(f"{noun} {index + 1}", index)
    combo.addItem(average_label, None)
    if was_average:
        previous_row = count
    combo.setCurrentIndex(previous_row if 0 <= previous_row <= count else 0)
    combo.blockSignals(False)


def _chosen_index(combo):
    return combo.currentData()
