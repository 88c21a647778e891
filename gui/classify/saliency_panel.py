"""The "Why?" box of the "Classify & tag" tab: token saliency for a label or an entity."""

from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QGroupBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QVBoxLayout

from kbert_gui.classify.saliency_format import METHODS
from kbert_gui.classify.saliency_text_view import SaliencyTextView
from kbert_gui.widgets import style

# How tall the shaded text may grow, in lines.
TEXT_LINES = 4


class SaliencyPanel(QGroupBox):
    """The widgets of token saliency, with nothing behind them (`SaliencyController`).

    A row of choices: what to explain (a classifier's label, a tagger's entity), the
    method (occlusion, gradient × input, integrated gradients), the "Why?" button, a
    busy line and "Export…"; then the caption naming the method and the target, and
    the text shaded per word-piece (`SaliencyTextView`).

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__("Why? Token saliency", parent)
        self.setObjectName("saliencyPanel")
        self.target_combo = QComboBox()
        self.target_combo.setObjectName("saliencyTargetCombo")
        self.target_combo.setToolTip(
            "What to explain: a label of the classifier, or an entity the tagger found "
            "(clicking an entity in the table picks it)."
        )
        self.target_combo.setMinimumContentsLength(14)
        self.method_combo = QComboBox()
        self.method_combo.setObjectName("saliencyMethodCombo")
        for method, name in METHODS:
            self.method_combo.addItem(name, method)
        self.method_combo.setToolTip(
            "Occlusion masks one word-piece at a time; gradient × input and integrated "
            "gradients use the model's gradients at the token embeddings."
        )
        self.why_button = QPushButton("&Why?")
        self.why_button.setObjectName("saliencyButton")
        self.why_button.setToolTip("Score every word-piece of the text for the chosen target.")
        self.busy_label = QLabel("Scoring…")
        self.busy_label.setStyleSheet(style.BUSY_STYLE)
        self.busy_label.hide()
        self.export_button = QPushButton("Ex&port…")
        self.export_button.setObjectName("saliencyExportButton")
        self.export_button.setToolTip("Save the scores shown as CSV or JSON.")
        self.export_button.setEnabled(False)
        self.caption_label = QLabel()
        self.caption_label.setObjectName("saliencyCaption")
        self.caption_label.setWordWrap(True)
        self.caption_label.setStyleSheet(style.HINT_STYLE)
        self.text_view = SaliencyTextView()
        self.text_view.setObjectName("saliencyTextView")
        self.text_view.setMaximumHeight(
            self.text_view.fontMetrics().lineSpacing() * TEXT_LINES + 16
        )

        choices = QHBoxLayout()
        choices.setSpacing(8)
        target_label = QLabel("E&xplain")
        target_label.setBuddy(self.target_combo)
        method_label = QLabel("&by")
        method_label.setBuddy(self.method_combo)
        for widget in (target_label, self.target_combo, method_label, self.method_combo):
            choices.addWidget(widget)
        choices.addWidget(self.why_button)
        choices.addWidget(self.busy_label)
        choices.addStretch(1)
        choices.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setSpacing(6)
        layout.addLayout(choices)
        layout.addWidget(self.caption_label)
        layout.addWidget(self.text_view)
