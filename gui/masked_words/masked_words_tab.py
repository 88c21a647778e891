"""The "Masked words" tab: what a model predicts behind each [MASK], as you type."""

from kbert_gui.masked_words.masked_words_controller import MaskedWordsController
from kbert_gui.masked_words.masked_words_panel import MaskedWordsPanel


class MaskedWordsTab(MaskedWordsPanel):
    """Type text with [MASK]s and see the current model's top-k tokens for each.

    Predictions follow the text as it changes, debounced through a
    `LatestRequestRunner`, so a newer text supersedes a stale one and only the latest
    text's predictions are ever shown. Clicking a prediction puts its token into the
    text at its mask. "Score these words" lists the named words at each mask instead,
    each scored whole (`kbert.inference.score_words`: a word of several pieces by the
    chain rule). A text longer than the model reads gets a note, in both views. The
    "Attention" page shows the model's attention for the text; the "Compare with" pane
    shows a second model's predictions next to the first, and both mark where they
    differ.

    The widgets are the `MaskedWordsPanel`'s; `controller` (a `MaskedWordsController`)
    holds the state and does the work.

    Args:
        context: the `AppContext`.
        parent: the parent widget.
    """

    def __init__(self, context, parent=None):
        super().__init__(context, parent)
        self.context = context
        self.controller = MaskedWordsController(self, context)

    def export_actions(self):
        """What File > Export offers here: the current model's predictions (CSV, JSON)
        and the attention heat map (PNG, SVG)."""
        return self.controller.export_actions()
