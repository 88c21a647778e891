"""The explorer's attention view: pick a layer and a head, see the heat map."""

from PySide6.QtCore import Qt
from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QScrollArea
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.attention_heat_map import AttentionHeatMap
from kbert_gui.error_banner import ErrorBanner
from kbert_gui.latest_request_runner import LatestRequestRunner

AVERAGE_OF_LAYERS = "average of layers"
AVERAGE_OF_HEADS = "average of heads"


class AttentionPanel(QWidget):
    """Layer and head combo boxes over an `AttentionHeatMap` of the current text.

    The weights come from `kbert.inference.attention_map` on the current model,
    computed in a worker, and only while the panel is visible: `set_text` while it
    is hidden just remembers the text, so typing stays fast; showing the panel
    computes the map of the latest text.

    Args:
        context: the `AppContext`.
        delay_ms: debounce pause before a computation starts.
        parent: the parent widget.
    """

    def __init__(self, context, delay_ms=250, parent=None):
        super().__init__(parent)
        self.setObjectName("attentionPanel")
        self.context = context
        self._text = ""
        self._computed_text = None
        self._attention = None

        self.runner = LatestRequestRunner(context.inference_pool, delay_ms, self)
        self.runner.result.connect(self._show_attention)
        self.runner.error.connect(self._show_error)
        self.runner.busy_changed.connect(self._show_busy)

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
        self.layer_combo.currentIndexChanged.connect(self._redraw)
        self.head_combo.currentIndexChanged.connect(self._redraw)
        self.busy_label = QLabel("Computing attention…")
        self.busy_label.setStyleSheet("color: #5f6b7a;")
        self.busy_label.hide()

        controls = QHBoxLayout()
        controls.setSpacing(8)
        controls.addWidget(QLabel("Layer"))
        controls.addWidget(self.layer_combo)
        controls.addSpacing(12)
        controls.addWidget(QLabel("Head"))
        controls.addWidget(self.head_combo)
        controls.addSpacing(12)
        controls.addWidget(self.busy_label)
        controls.addStretch(1)

        self.error_banner = ErrorBanner()
        self.heat_map = AttentionHeatMap()
        scroll_area = QScrollArea()
        scroll_area.setWidget(self.heat_map)
        scroll_area.setWidgetResizable(False)
        scroll_area.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(controls)
        layout.addWidget(self.error_banner)
        layout.addWidget(scroll_area, 1)

        context.models.source_changed.connect(self._forget_model)

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
        self.heat_map.clear()
        self._computed_text = None
        if self.isVisible():
            self._request()

    @Slot(object)
    def _show_attention(self, attention):
        self.error_banner.clear_error()
        self._attention = attention
        _fill_combo(self.layer_combo, "layer", attention.num_layers, AVERAGE_OF_LAYERS, 0)
        # The average of the heads reads best at first; single heads are one click away.
        heads = attention.num_heads
        _fill_combo(self.head_combo, "head", heads, AVERAGE_OF_HEADS, heads)
        self._redraw()

    @Slot(str)
    def _show_error(self, message):
        self._attention = None
        self.heat_map.clear()
        self.error_banner.show_error(message)

    @Slot(bool)
    def _show_busy(self, busy):
        self.busy_label.setVisible(busy)

    @Slot()
    def _redraw(self):
        if self._attention is None or self.layer_combo.count() == 0 or self.head_combo.count() == 0:
            return
        layer, head = self.selection()
        self.heat_map.set_map(self._attention.tokens, self._attention.select(layer, head))


def _compute_attention(models, source, text):
    from kbert.inference import attention_map

    return attention_map(models.model("BertMaskedLM", source), None, text)


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
