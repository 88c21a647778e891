"""What the saliency view writes and paints: method names, the caption, token colours,
exports.

Pure functions of a `kbert.inference.TokenSaliency`, no widgets, so each line, colour and
exported row can be checked on its own.
"""

import numpy as np

from kbert_gui.widgets import style
from kbert_gui.widgets.probability_text import probability_text

# The methods offered, as kbert names them and as the tab does.
METHODS = (
    ("occlusion", "Occlusion"),
    ("gradient_x_input", "Gradient × input"),
    ("integrated_gradients", "Integrated gradients"),
)
METHOD_NAMES = dict(METHODS)
METHOD_HINTS = {
    "occlusion": "how much the probability drops when the piece alone is replaced by [MASK]",
    "gradient_x_input": "the probability's gradient at the piece's embedding, times the embedding",
    "integrated_gradients": "gradients along the path from [PAD] embeddings, times the difference",
}
SALIENCY_COLUMNS = ("token", "start", "end", "score")
# A pair's columns: `sequence` says which text `start` and `end` point into (0, 1).
PAIR_SALIENCY_COLUMNS = SALIENCY_COLUMNS + ("sequence",)
# Between the text and the second text of a pair in the shaded view.
PAIR_SEPARATOR = "\n"
# The strongest score tints its piece this far from white towards its colour.
STRONGEST_TINT = 0.55


def target_words(saliency):
    """What is explained: “pos”, or the PER entity “alice smith”."""
    if saliency.target_span is None:
        return f"“{saliency.target}”"
    start, end = saliency.target_span
    return f"the {saliency.target} entity “{saliency.text[start:end]}”"


def saliency_caption(saliency):
    """The line above the shaded text: the method, the target and how to read it."""
    method = saliency.method
    caption = (
        f"{METHOD_NAMES[method]} for {target_words(saliency)} "
        f"(probability {probability_text(saliency.target_score)}): {METHOD_HINTS[method]}."
    )
    if saliency.baseline_score is not None:
        change = saliency.target_score - saliency.baseline_score
        caption += (
            f" The scores add up to {float(np.sum(saliency.scores)):+.4g}; the probability "
            f"changed by {change:+.4g} from the baseline ({saliency.steps} steps)."
        )
    return caption + " Green supports it, red opposes it; hover a piece for its score."


def score_text(score):
    """A score as the tooltips and exports show it: signed, four significant digits."""
    return f"{float(score):+.4g}"


def token_tooltip(token, score):
    return f"{token}: {score_text(score)}"


def token_colors(scores):
    """One "#rrggbb" background per score: white for 0, the strongest at `STRONGEST_TINT`
    towards `SUPPORTS_TARGET` (positive) or `OPPOSES_TARGET` (negative)."""
    scores = np.asarray(scores, dtype=np.float64)
    largest = float(np.abs(scores).max()) if scores.size else 0.0
    paper = np.asarray(style.rgb(style.PAPER), dtype=np.float64)
    supports = np.asarray(style.rgb(style.SUPPORTS_TARGET), dtype=np.float64)
    opposes = np.asarray(style.rgb(style.OPPOSES_TARGET), dtype=np.float64)
    colors = []
    for score in scores:
        weight = STRONGEST_TINT * abs(score) / largest if largest > 0 else 0.0
        tint = supports if score >= 0 else opposes
        red, green, blue = np.rint(paper + weight * (tint - paper)).astype(int)
        colors.append(f"#{red:02x}{green:02x}{blue:02x}")
    return colors


def shown_text(saliency):
    """`(text, offsets)`: what the view shows (the text, then a pair's second text on its
    own line) and each piece's `(start, end)` in it."""
    if saliency.pair is None:
        return saliency.text, tuple(saliency.offsets)
    shift = len(saliency.text) + len(PAIR_SEPARATOR)
    offsets = tuple(
        (start + shift, end + shift) if saliency.sequence_of(index) else (start, end)
        for index, (start, end) in enumerate(saliency.offsets)
    )
    return saliency.text + PAIR_SEPARATOR + saliency.pair, offsets


def saliency_rows(saliency):
    """The CSV export's rows: one per word-piece, in text order."""
    return saliency.records()


def saliency_document(saliency):
    """The JSON export: kbert's `TokenSaliency.as_dict()` and the method's name as shown."""
    return {"method_name": METHOD_NAMES[saliency.method], **saliency.as_dict()}
