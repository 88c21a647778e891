"""The "Masked words" tab's behaviour: predictions as the text changes, filling a mask
in, marking where the two models differ, following the current model."""

from PySide6.QtCore import QObject
from PySide6.QtCore import Slot

from kbert_gui.masked_words.fill_mask_outcome import FillMaskOutcome
from kbert_gui.masked_words.masked_text_edit import MASK_TOKEN
from kbert_gui.masked_words.masked_text_edit import NO_MASK_HINT
from kbert_gui.masked_words.masked_words_format import EXAMPLE_TEXT
from kbert_gui.masked_words.masked_words_format import PREDICTION_COLUMNS
from kbert_gui.masked_words.masked_words_format import display_name
from kbert_gui.masked_words.masked_words_format import prediction_document
from kbert_gui.masked_words.masked_words_format import prediction_rows
from kbert_gui.services.export_files import data_actions
from kbert_gui.services.export_files import image_actions
from kbert_gui.services.latest_request_runner import LatestRequestRunner


class MaskedWordsController(QObject):
    """Drives a `MaskedWordsPanel`: the current model's predictions for its text.

    Every edit of the text, "Top k" or "Score these words" submits a
    `FillMaskOutcome.compute` request to the app's inference pool through `runner`, a
    debounced `LatestRequestRunner`, so a newer text supersedes a stale one and only
    the latest text's predictions are ever shown; the second model's pane is asked
    after it (the serial pool runs the current model first), and the attention panel
    gets the text. A clicked prediction of either model fills its mask in, unless the
    text changed since. Both views mark where the two models' predictions differ.
    Another current model drops the shown predictions and predicts again. The panel
    opens on `EXAMPLE_TEXT`.

    Args:
        panel: the `MaskedWordsPanel` (also the parent).
        context: the `AppContext`.
    """

    def __init__(self, panel, context):
        super().__init__(panel)
        self.panel = panel
        self.context = context
        self.runner = LatestRequestRunner(context.inference_pool, parent=self)
        self.runner.result.connect(self._show_outcome)
        self.runner.error.connect(panel.predictions_view.show_error)
        self.runner.busy_changed.connect(panel.busy_label.setVisible)

        panel.editor.textChanged.connect(self._text_changed)
        panel.top_k_spin.valueChanged.connect(self._request_predictions)
        panel.targets_edit.textChanged.connect(self._request_predictions)
        panel.predictions_view.prediction_chosen.connect(self.fill_in)
        panel.comparison_pane.prediction_chosen.connect(self.fill_in)
        panel.comparison_pane.outcome_changed.connect(self._compare)
        context.models.source_changed.connect(self._source_changed)

        self._show_source(context.models.source)
        panel.editor.setPlainText(EXAMPLE_TEXT)

    @Slot(str, int, int, str)
    def fill_in(self, text, start, end, replacement):
        """Replaces the mask at `text[start:end]` with `replacement`.

        `text` is the text the clicked prediction was made for; if the user has
        edited it since, its offsets no longer hold and the click is ignored.
        """
        current = self.panel.text
        if text != current or current[start:end] != MASK_TOKEN:
            self.context.status_message.emit("The text changed; pick from the new predictions.")
            return
        self.panel.editor.replace_span(start, end, replacement)
        self.panel.editor.setFocus()

    def export_actions(self):
        """The current model's predictions (CSV, JSON) and the attention heat map (PNG,
        SVG, captioned with the model, layer and head)."""
        view = self.panel.predictions_view
        attention = self.panel.attention_panel
        heat_map = attention.heat_map
        return [
            *data_actions(
                "Predictions",
                lambda: (PREDICTION_COLUMNS, prediction_rows(view.outcome)),
                lambda: prediction_document(view.outcome),
                lambda: view.outcome is not None,
            ),
            *image_actions(
                "Attention heat map",
                heat_map,
                lambda: heat_map.weights is not None,
                attention.caption,
            ),
        ]

    # --- Predictions ----------------------------------------------------------------

    @Slot()
    def _text_changed(self):
        self._request_predictions()
        self.panel.attention_panel.set_text(self.panel.text)

    @Slot()
    def _request_predictions(self):
        panel = self.panel
        text, top_k, targets = panel.text, panel.top_k_spin.value(), panel.targets()
        if MASK_TOKEN in text:
            models = self.context.models
            self.runner.submit(FillMaskOutcome.compute, models, models.source, text, top_k, targets)
        else:
            self.runner.cancel()
            panel.predictions_view.show_hint(NO_MASK_HINT)
        # Submitted second, so the current model's request runs first on the serial pool.
        panel.comparison_pane.request(text, top_k, targets)

    @Slot(object)
    def _show_outcome(self, outcome):
        self.panel.predictions_view.show_outcome(outcome)
        pane = self.panel.comparison_pane
        self._compare(pane.view.outcome if pane.comparison_source else None)

    @Slot(object)
    def _compare(self, other):
        """Marks the differences between the two models' predictions in both views."""
        view = self.panel.predictions_view
        mine = view.outcome
        view.set_comparison(other)
        self.panel.comparison_pane.view.set_comparison(mine if other is not None else None)

    # --- The current model ------------------------------------------------------------

    @Slot(str)
    def _source_changed(self, source):
        self.runner.cancel()
        self._show_source(source)
        self.panel.predictions_view.clear()
        self._request_predictions()

    def _show_source(self, source):
        view = self.panel.predictions_view
        view.set_title(display_name(source))
        view.title_label.setToolTip(str(source))
