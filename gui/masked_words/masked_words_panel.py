"""The "Masked words" tab's widgets: the text and its options, two models' predictions,
the attention views."""

from PySide6.QtCore import Qt
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
from kbert_gui.masked_words.mask_predictions_view import MaskPredictionsView
from kbert_gui.masked_words.masked_text_edit import MaskedTextEdit
from kbert_gui.masked_words.masked_words_format import SCORING_NOTE
from kbert_gui.masked_words.model_comparison_pane import ModelComparisonPane
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets import style

DEFAULT_TOP_K = 5


class MaskedWordsPanel(QWidget):
    """The widgets and layout of the "Masked words" tab, with nothing behind them.

    Above a splitter, the text (`editor`) with "Insert [MASK]" (also Ctrl+M anywhere in
    the tab), "Top k", "Score these words" and the busy line; below it, two pages
    (`output_tabs`): the current model's predictions (`predictions_view`) beside a
    second model's (`comparison_pane`), and the `attention_panel`. The second model's
    pane and the attention panel make their own requests, on the context they are
    given; everything else is the `MaskedWordsController`'s to fill.

    Args:
        context: the `AppContext` (for the comparison pane and the attention panel).
        parent: the parent widget.
    """

    def __init__(self, context, parent=None):
        super().__init__(parent)
        self.setObjectName("maskedWordsTab")
        self.setWindowTitle(TabKey.MASKED_WORDS.label)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self._build_input())
        splitter.addWidget(self._build_output(context))
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([150, 600])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.addWidget(splitter)

    @property
    def text(self):
        return self.editor.toPlainText()

    def targets(self):
        """The words of "Score these words", or None when it is empty."""
        words = [word.strip() for word in self.targets_edit.text().split(",")]
        words = [word for word in words if word]
        return words or None

    # --- The text and its options ---------------------------------------------------

    def _build_input(self):
        self.editor = MaskedTextEdit()
        self.insert_mask_button = QPushButton("Insert [MASK]")
        self.insert_mask_button.setObjectName("insertMaskButton")
        self.insert_mask_button.setToolTip(
            "Insert [MASK] at the cursor, or over the selected word (Ctrl+M)."
        )
        self.insert_mask_button.clicked.connect(self.editor.insert_mask)
        # A shortcut of the tab (active while focus is in it) rather than the button's
        # own, which clicks only after the button's press animation.
        self.insert_mask_shortcut = QShortcut(
            QKeySequence("Ctrl+M"), self, context=Qt.ShortcutContext.WidgetWithChildrenShortcut
        )
        self.insert_mask_shortcut.setWhatsThis("Insert [MASK] at the cursor")
        self.insert_mask_shortcut.activated.connect(self.editor.insert_mask)
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
        self.scoring_note = QLabel(SCORING_NOTE)
        self.scoring_note.setObjectName("scoringNote")
        self.scoring_note.setWordWrap(True)
        self.scoring_note.setStyleSheet(style.NOTE_STYLE)
        self.scoring_note.hide()
        self.targets_edit.textChanged.connect(self._show_scoring)
        self.busy_label = QLabel("Predicting…")
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.setStyleSheet(style.BUSY_STYLE)
        self.busy_label.setVisible(False)

        input_widget = QWidget()
        input_layout = QVBoxLayout(input_widget)
        input_layout.setContentsMargins(0, 0, 0, 0)
        input_layout.setSpacing(8)
        input_layout.addWidget(self.editor, 1)
        input_layout.addLayout(self._build_controls())
        input_layout.addWidget(self.scoring_note)
        return input_widget

    def _show_scoring(self):
        # Named words replace the top k until the field is empty again: said, not silent.
        scoring = self.targets() is not None
        self.scoring_note.setVisible(scoring)
        self.top_k_spin.setEnabled(not scoring)

    def _build_controls(self):
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
        return controls

    # --- Predictions and attention ----------------------------------------------------

    def _build_output(self, context):
        self.predictions_view = MaskPredictionsView()
        self.predictions_view.setObjectName("predictionsView")
        self.comparison_pane = ModelComparisonPane(context)
        # A caption as tall as the comparison's model picker keeps the columns level.
        caption = QLabel("Current model (change it with “Open model…” above)")
        caption.setStyleSheet(style.HINT_STYLE)
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

        self.attention_panel = AttentionPanel(context)
        self.output_tabs = QTabWidget()
        self.output_tabs.setObjectName("maskedWordsOutputTabs")
        self.output_tabs.addTab(predictions_page, "Predictions")
        self.output_tabs.addTab(self.attention_panel, "Attention")
        self.output_tabs.setTabToolTip(1, "Where each token looks, per layer and head.")
        return self.output_tabs
