"""The masked-word explorer: what a model predicts behind each [MASK], as you type."""

import pathlib

from PySide6.QtCore import Qt
from PySide6.QtCore import Slot
from PySide6.QtGui import QKeySequence
from PySide6.QtGui import QShortcut
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QSpinBox
from PySide6.QtWidgets import QSplitter
from PySide6.QtWidgets import QTabWidget
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.masked_words.attention_panel import AttentionPanel
from kbert_gui.masked_words.masked_words_format import PREDICTION_COLUMNS
from kbert_gui.masked_words.masked_words_format import prediction_document
from kbert_gui.masked_words.masked_words_format import prediction_rows
from kbert_gui.services.export_files import data_actions
from kbert_gui.services.export_files import image_actions
from kbert_gui.masked_words.fill_mask_outcome import FillMaskOutcome
from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.masked_words.mask_predictions_view import MaskPredictionsView
from kbert_gui.masked_words.masked_text_edit import MASK_TOKEN
from kbert_gui.masked_words.masked_text_edit import NO_MASK_HINT
from kbert_gui.masked_words.masked_text_edit import MaskedTextEdit
from kbert_gui.masked_words.model_comparison_pane import ModelComparisonPane

# Long enough to skip the keystrokes of a word, short enough to feel live.
DEBOUNCE_MS = 250
DEFAULT_TOP_K = 5
EXAMPLE_TEXT = (
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a [MASK]."
)


class MaskedWordsTab(QWidget):
    """Type text with [MASK]s and see the current model's top-k tokens for each.

    Predictions follow the text as it changes, debounced (`DEBOUNCE_MS`) through a
    `LatestRequestRunner`, so a newer text supersedes a stale one and only the
    latest text's predictions are ever shown. Clicking a prediction puts its token
    into the text at its mask. "Score these words" lists the named words at each
    mask instead, each scored whole (`kbert.inference.score_words`: a word of
    several pieces by the chain rule). A text longer than the model reads gets a
    note, in both views. The "Attention" tab shows the model's attention for the
    text; the "Compare with" pane shows a second model's predictions next to the
    first, and both mark where they differ.

    Args:
        context: the `AppContext`.
        parent: the parent widget.
    """

    def __init__(self, context, parent=None):
        super().__init__(parent)
        self.setObjectName("explorerTab")
        self.setWindowTitle("Masked words")
        self.context = context

        self.runner = LatestRequestRunner(context.inference_pool, DEBOUNCE_MS, self)
        self.runner.result.connect(self._show_outcome)
        self.runner.error.connect(self._show_error)
        self.runner.busy_changed.connect(self._show_busy)

        # --- Input ---
        self.editor = MaskedTextEdit()
        self.insert_mask_button = QPushButton("Insert [MASK]")
        self.insert_mask_button.setObjectName("insertMaskButton")
        # A shortcut of the tab (active while focus is in it) rather than the button's
        # own, which clicks only after the button's press animation.
        self.insert_mask_shortcut = QShortcut(
            QKeySequence("Ctrl+M"), self, context=Qt.ShortcutContext.WidgetWithChildrenShortcut
        )
        self.insert_mask_shortcut.activated.connect(self.editor.insert_mask)
        self.insert_mask_button.setToolTip(
            "Insert [MASK] at the cursor, or over the selected word (Ctrl+M)."
        )
        self.insert_mask_button.clicked.connect(self.editor.insert_mask)
        self.top_k_spin = QSpinBox()
        self.top_k_spin.setObjectName("topKSpinBox")
        self.top_k_spin.setRange(1, 50)
        self.top_k_spin.setValue(DEFAULT_TOP_K)
        self.top_k_spin.setToolTip("How many candidate tokens to list for each mask.")
        self.targets_edit = QLineEdit()
        self.targets_edit.setObjectName("targetsEdit")
        self.targets_edit.setClearButtonEnabled(True)
        self.targets_edit.setPlaceholderText("e.g. paris, london, rome")
        self.targets_edit.setToolTip(
            "Comma-separated words to score at each mask instead of listing the "
            "vocabulary's top k. A word of several word pieces is scored whole: the "
            "product of its pieces' probabilities, each given the ones before it."
        )
        self.busy_label = QLabel("Predicting…")
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.setStyleSheet("color: #5f6b7a;")
        self.busy_label.setVisible(False)

        controls = QHBoxLayout()
        controls.setSpacing(8)
        controls.addWidget(self.insert_mask_button)
        controls.addSpacing(12)
        top_k_label = QLabel("Top &k")
        top_k_label.setBuddy(self.top_k_spin)
        controls.addWidget(top_k_label)
        controls.addWidget(self.top_k_spin)
        controls.addSpacing(12)
        targets_label = QLabel("&Score these words")
        targets_label.setBuddy(self.targets_edit)
        controls.addWidget(targets_label)
        controls.addWidget(self.targets_edit, 1)
        controls.addSpacing(12)
        controls.addWidget(self.busy_label)

        input_widget = QWidget()
        input_layout = QVBoxLayout(input_widget)
        input_layout.setContentsMargins(0, 0, 0, 0)
        input_layout.setSpacing(8)
        input_layout.addWidget(self.editor, 1)
        input_layout.addLayout(controls)

        # --- Output ---
        self.predictions_view = MaskPredictionsView()
        self.predictions_view.setObjectName("predictionsView")
        self.comparison_pane = ModelComparisonPane(context, DEBOUNCE_MS)
        # A caption as tall as the comparison's model picker keeps the columns level.
        caption = QLabel("Current model (change it with “Open model…” above)")
        caption.setStyleSheet("color: #5f6b7a;")
        caption.setMinimumHeight(self.comparison_pane.compare_button.sizeHint().height())
        primary_column = QWidget()
        primary_layout = QVBoxLayout(primary_column)
        primary_layout.setContentsMargins(0, 0, 0, 0)
        primary_layout.setSpacing(6)
        primary_layout.addWidget(caption)
        primary_layout.addWidget(self.predictions_view, 1)
        columns = QSplitter(Qt.Orientation.Horizontal)
        columns.setChildrenCollapsible(False)
        columns.setHandleWidth(12)
        columns.addWidget(primary_column)
        columns.addWidget(self.comparison_pane)
        columns.setStretchFactor(0, 1)
        columns.setStretchFactor(1, 1)
        columns.setSizes([500, 500])
        predictions_page = QWidget()
        predictions_layout = QVBoxLayout(predictions_page)
        predictions_layout.setContentsMargins(8, 8, 8, 8)
        predictions_layout.addWidget(columns)

        self.attention_panel = AttentionPanel(context, DEBOUNCE_MS)
        self.output_tabs = QTabWidget()
        self.output_tabs.setObjectName("explorerOutputTabs")
        self.output_tabs.addTab(predictions_page, "Predictions")
        self.output_tabs.addTab(self.attention_panel, "Attention")
        self.output_tabs.setTabToolTip(1, "Where each token looks, per layer and head.")

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(input_widget)
        splitter.addWidget(self.output_tabs)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([150, 600])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.addWidget(splitter)

        # --- Wiring ---
        self.editor.textChanged.connect(self._text_changed)
        self.top_k_spin.valueChanged.connect(self._request_predictions)
        self.targets_edit.textChanged.connect(self._request_predictions)
        self.predictions_view.prediction_chosen.connect(self.fill_in)
        self.comparison_pane.prediction_chosen.connect(self.fill_in)
        self.comparison_pane.outcome_changed.connect(self._compare)
        context.models.source_changed.connect(self._source_changed)

        self._show_source(context.models.source)
        self.editor.setPlainText(EXAMPLE_TEXT)

    # --- Public -----------------------------------------------------------------------

    @property
    def text(self):
        return self.editor.toPlainText()

    def targets(self):
        """The words of "Score these words", or None when it is empty."""
        words = [word.strip() for word in self.targets_edit.text().split(",")]
        words = [word for word in words if word]
        return words or None

    def export_actions(self):
        """What File > Export offers here: the current model's predictions (CSV, JSON)
        and the attention heat map (PNG, SVG)."""
        view = self.predictions_view
        return [
            *data_actions(
                "Predictions",
                lambda: (PREDICTION_COLUMNS, prediction_rows(view.outcome)),
                lambda: prediction_document(view.outcome),
                lambda: view.outcome is not None,
            ),
            *image_actions(
                "Attention heat map",
                self.attention_panel.heat_map,
                lambda: self.attention_panel.heat_map.weights is not None,
            ),
        ]

    @Slot(str, int, int, str)
    def fill_in(self, text, start, end, replacement):
        """Replaces the mask at `text[start:end]` with `replacement`.

        `text` is the text the clicked prediction was made for; if the user has
        edited it since, its offsets no longer hold and the click is ignored.
        """
        if text != self.text or self.text[start:end] != MASK_TOKEN:
            self.context.status_message.emit("The text changed; pick from the new predictions.")
            return
        self.editor.replace_span(start, end, replacement)
        self.editor.setFocus()

    # --- Predictions ------------------------------------------------------------------

    @Slot()
    def _text_changed(self):
        self._request_predictions()
        self.attention_panel.set_text(self.text)

    @Slot()
    def _request_predictions(self):
        text, top_k, targets = self.text, self.top_k_spin.value(), self.targets()
        if MASK_TOKEN in text:
            models = self.context.models
            self.runner.submit(FillMaskOutcome.compute, models, models.source, text, top_k, targets)
        else:
            self.runner.cancel()
            self.predictions_view.show_hint(NO_MASK_HINT)
        # Submitted second, so the current model's request runs first on the serial pool.
        self.comparison_pane.request(text, top_k, targets)

    @Slot(object)
    def _show_outcome(self, outcome):
        self.predictions_view.show_outcome(outcome)
        pane = self.comparison_pane
        self._compare(pane.view.outcome if pane.comparison_source else None)

    @Slot(object)
    def _compare(self, other):
        """Marks the differences between the two models' predictions in both views."""
        mine = self.predictions_view.outcome
        self.predictions_view.set_comparison(other)
        self.comparison_pane.view.set_comparison(mine if other is not None else None)

    @Slot(str)
    def _show_error(self, message):
        self.predictions_view.show_error(message)

    @Slot(bool)
    def _show_busy(self, busy):
        self.busy_label.setVisible(busy)

    @Slot(str)
    def _source_changed(self, source):
        self.runner.cancel()
        self._show_source(source)
        self.predictions_view.clear()
        self._request_predictions()

    def _show_source(self, source):
        self.predictions_view.set_title(_display_name(source))
        self.predictions_view.title_label.setToolTip(str(source))


def _display_name(source):
    path = pathlib.Path(source)
    return path.name if len(path.parts) > 1 else str(source)
