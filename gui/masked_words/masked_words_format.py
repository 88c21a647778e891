"""What the "Masked words" tab writes: length notes, word notes, exports, comparisons.

Pure functions of kbert's results and `FillMaskOutcome`s, no Qt, so that each line the
tab shows (and each file it saves) can be checked on its own.
"""

import html

from kbert.tokenizer.bert_tokenizer import display_token
from kbert_gui.services.model_description import short_name

# The text the tab opens with.
EXAMPLE_TEXT = (
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a [MASK]."
)
# The columns of the exported predictions, in order.
PREDICTION_COLUMNS = ("mask", "start", "end", "rank", "token", "pieces", "probability", "text")


def display_name(source):
    """A model's name above its predictions: the name the window's header gives it
    (`short_name`: a run's model after its run, "runs/sentiment"; a preset name as
    is). The full path goes in the tooltip."""
    return short_name(source)


def fresh_heads_warning(source, fresh_heads):
    """The warning over predictions of a model whose masked-LM head is untrained (rich
    text: the model's name is escaped)."""
    return (
        f"{html.escape(str(source))} has no trained masked-LM head "
        f"({', '.join(fresh_heads)} was initialised at random), so these predictions are "
        "random. Pick a pretrained model (a BertPretrainer or BertMaskedLM preset) to see "
        "real ones."
    )


def too_long_message(num_tokens, limit, cut_masks, masks):
    """Why a text cannot be predicted: the model's limit cuts off some of its masks."""
    which = "its [MASK]" if masks == 1 else f"{cut_masks} of its {masks} [MASK]s"
    return (
        f"The text is {num_tokens:,} tokens long and the model reads at most {limit:,}: "
        f"{which} {'comes' if cut_masks == 1 else 'come'} after that. Shorten the text "
        "or move the masks earlier."
    )


# Under the controls while "Score these words" holds words: they replace the top k, for
# every text, until the field is cleared.
SCORING_NOTE = (
    "Listing only the words to score, at every mask and for every text, until that field "
    "is cleared (Top k is not used meanwhile)."
)

def truncation_note(num_tokens, limit, what):
    """The visible note on a text longer than the model reads, or "" for one that fits.

    Args:
        num_tokens: the text's tokens, `[CLS]` and `[SEP]` included.
        limit: the most tokens the model reads.
        what: what the cut text gives ("predictions", "attention").
    """
    if num_tokens <= limit:
        return ""
    return (
        f"The text is {num_tokens:,} tokens long; the model reads the first {limit:,}, so "
        f"the {what} leave out the rest."
    )


def same_word_notes(mask_scores):
    """Notes on named words the model cannot tell apart (a lower-casing tokenizer gives
    "Paris" and "paris" the same pieces): each group once, in the order named."""
    groups = {}
    for score in mask_scores.scores:
        groups.setdefault(score.pieces, [])
        if score.word not in groups[score.pieces]:
            groups[score.pieces].append(score.word)
    notes = []
    for pieces, words in groups.items():
        if len(words) > 1 and pieces:
            named = ", ".join(f"“{word}”" for word in words[:-1]) + f" and “{words[-1]}”"
            notes.append(
                f"{named} are the same to this model ({' '.join(pieces)}): one score, "
                "shown for each."
            )
    return notes


def rows_of(mask):
    """The rows a mask lists, most probable first: its top-k `MaskPrediction`s, or its
    named `WordScore`s (those that cannot be scored last, in the order named)."""
    if hasattr(mask, "candidates"):
        return mask.candidates
    return tuple(
        sorted(mask.scores, key=lambda score: (score.probability is None, -(score.probability or 0)))
    )


def row_label(row):
    """A row's first column: the token (with its "##"), or the named word."""
    return row.word if hasattr(row, "word") else row.token


def row_replacement(row):
    """What a row puts in place of its mask: the token without "##", or the word."""
    return row.word if hasattr(row, "word") else display_token(row.token)


def prediction_rows(outcome):
    """The exported rows: per mask (counted from 1) its rows, as the view lists them."""
    rows = []
    for index, mask in enumerate(outcome.masks, start=1):
        for rank, row in enumerate(rows_of(mask), start=1):
            pieces = row.pieces if hasattr(row, "pieces") else (row.token,)
            rows.append(
                {
                    "mask": index,
                    "start": mask.start,
                    "end": mask.end,
                    "rank": rank,
                    "token": row_label(row),
                    "pieces": " ".join(pieces),
                    "probability": row.probability,
                    "text": row.text,
                }
            )
    return rows


def prediction_document(outcome):
    """The exported JSON of one model's predictions for the tab's text."""
    return {
        "model": outcome.source,
        "text": outcome.text,
        "scored_words": outcome.result is None,
        "tokens": outcome.num_tokens,
        "token_limit": outcome.limit,
        "masks": [
            {
                "start": mask.start,
                "end": mask.end,
                "predictions": [
                    {key: value for key, value in row.items() if key not in ("start", "end")}
                    for row in prediction_rows(outcome)
                    if row["mask"] == index
                ],
            }
            for index, mask in enumerate(outcome.masks, start=1)
        ],
    }


def top_differences(outcome, other):
    """Where two models' predictions for the same text differ, mask by mask.

    Args:
        outcome: the `FillMaskOutcome` shown.
        other: the other model's, for the same text, or None.

    Returns:
        `{mask start: (top_differs, labels only in outcome's list)}` for the masks both
        predicted; empty without `other` or for another text.
    """
    if other is None or other.text != outcome.text:
        return {}
    theirs = {mask.start: mask for mask in other.masks}
    differences = {}
    for mask in outcome.masks:
        if mask.start not in theirs:
            continue
        mine, their_rows = rows_of(mask), rows_of(theirs[mask.start])
        their_labels = {row_label(row) for row in their_rows}
        top_differs = bool(mine and their_rows) and _top(mine) != _top(their_rows)
        only_mine = {row_label(row) for row in mine} - their_labels
        differences[mask.start] = (top_differs, only_mine)
    return differences


def _top(rows):
    """The first row's label, when it has a probability."""
    return row_label(rows[0]) if rows[0].probability is not None else None
