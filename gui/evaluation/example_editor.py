"""The browser's "Edit and predict" box: change an example's text, predict it again."""

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.widgets import style
from kbert_gui.widgets.probability_text import probability_text

HINT = "Select an example to edit its text and predict it again, in place."


class ExampleEditor(QWidget):
    """The current example's text (and second text) in editable fields; "Predict again"
    asks for a new prediction (`predict_requested(position, text, pair)`), and
    `show_prediction` shows the label with each word-piece shaded by its saliency
    (green supports the label, red speaks against it), as LIT's datapoint editor does.

    Args:
        has_pair: whether the examples are text pairs (a second field is shown).
        parent: the parent widget.
    """

    predict_requested = Signal(int, str, object)

    def __init__(self, has_pair, parent=None):
        super().__init__(parent)
        self.setObjectName("exampleEditor")
        self._position = None
        self.text_edit = QPlainTextEdit()
        self.text_edit.setObjectName("exampleText")
        self.text_edit.setMaximumHeight(70)
        self.pair_edit = QLineEdit()
        self.pair_edit.setPlaceholderText("second text")
        self.pair_edit.setVisible(has_pair)
        self.predict_button = QPushButton("Predict again")
        self.predict_button.setToolTip("Predict the edited text and replace the row's prediction")
        self.predict_button.clicked.connect(self._request)
        self.result_label = QLabel(HINT)
        self.result_label.setWordWrap(True)
        self.result_label.setStyleSheet(style.HINT_STYLE)
        self.saliency_label = QLabel()
        self.saliency_label.setObjectName("exampleSaliency")
        self.saliency_label.setWordWrap(True)
        self.saliency_label.setToolTip(
            "Each word-piece shaded by how much it supports the predicted label (occlusion)"
        )
        buttons = QHBoxLayout()
        buttons.addWidget(self.result_label, 1)
        buttons.addWidget(self.predict_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text_edit)
        layout.addWidget(self.pair_edit)
        layout.addLayout(buttons)
        layout.addWidget(self.saliency_label)
        self.show_record(None, None)

    @property
    def position(self):
        """The record edited (its place in file order), or None."""
        return self._position

    def show_record(self, position, record):
        """Puts the example `record` (a dict; None: none) in the fields."""
        self._position = position
        self.text_edit.setPlainText("" if record is None else record["text"])
        self.pair_edit.setText("" if record is None else str(record.get("pair") or ""))
        self.predict_button.setEnabled(record is not None)
        self.result_label.setText(HINT if record is None else "Edit the text, then predict again.")
        self.saliency_label.clear()

    def show_busy(self):
        self.predict_button.setEnabled(False)
        self.result_label.setText("Predicting…")

    def show_error(self, message):
        self.predict_button.setEnabled(self._position is not None)
        self.result_label.setText(f"Not predicted: {message}")

    def show_prediction(self, prediction):
        """Shows an `ExamplePrediction` (the label, its probability, the shaded text)."""
        self.predict_button.setEnabled(True)
        self.result_label.setText(
            f"Predicted {prediction.label} ({probability_text(prediction.probability)})"
        )
        self.saliency_label.setText(saliency_html(prediction.saliency))

    def _request(self):
        if self._position is None:
            return
        pair = self.pair_edit.text() if self.pair_edit.isVisible() else None
        self.show_busy()
        self.predict_requested.emit(self._position, self.text_edit.toPlainText(), pair or None)


def saliency_html(saliency):
    """The word-pieces of a `TokenSaliency` as rich text, each on a background whose
    strength is its score over the largest one's (green positive, red negative)."""
    scores = saliency.scores
    largest = float(max(abs(scores).max(), 1e-9)) if len(scores) else 1.0
    pieces, sequence = [], 0
    for token, score, sequence_id in zip(saliency.tokens, scores, saliency.sequence_ids):
        if sequence_id != sequence:
            pieces.append("<b>·</b>")
            sequence = sequence_id
        strength = min(abs(float(score)) / largest, 1.0)
        full = (0, 160, 60) if score >= 0 else (210, 40, 40)
        # The colour laid over white at that strength (rich text has no alpha).
        mixed = "".join(f"{round(255 - strength * (255 - part)):02x}" for part in full)
        pieces.append(
            f'<span style="background-color: #{mixed}">{html.escape(token)}</span>'
        )
    return " ".join(pieces)
