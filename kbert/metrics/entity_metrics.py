"""Entity-level precision, recall and F1 for tag sequences, as seqeval's default mode.

seqeval's default (non-strict) mode is the conlleval chunking: it reads the first character
of each tag as its position letter (B, I, E, S, O) and the rest after the first "-" as the
entity type, and it is lenient with invalid transitions: an I- after O or after another type
starts an entity, an E- or S- ends one, a type change ends one. BIO, IOB1 and BIOES/IOBES
tags all go through the same rules. Sentences are joined with an "O" between them, so
entities never span two sentences (except for malformed tags such as a bare "X", which
seqeval, and this module, keep open across "O"s).

The chunk boundaries are found with vectorised numpy over all tokens at once.
"""

import itertools
import logging

import numpy as np

__all__ = ["entity_scores", "entity_scores_by_type", "extract_entities"]

logger = logging.getLogger(__name__)

_WELL_FORMED_PREFIXES = ("B-", "I-", "E-", "S-")
_BARE_LETTERS = ("O", "B", "I", "E", "S")
# seqeval's initial "previous type"; differs from every parsed type, which is never empty.
_NO_TYPE = -1


def _tag_parts(tags):
    """Position letters and entity-type names of `tags` (parsed once per distinct tag).

    Returns:
        `(letters, type_ids, type_names)`: two arrays parallel to `tags` and the list of
        type names that `type_ids` index into.
    """
    distinct_tags, tag_ids = np.unique(tags, return_inverse=True)
    if len(distinct_tags) and distinct_tags[0] == "":
        raise ValueError("Tag sequences must not contain an empty tag ''.")
    letters = np.array([tag[0] for tag in distinct_tags], dtype="<U1")
    # Like seqeval: everything after the first "-" (or after the letter when there is
    # no "-"), "_" when that is empty ("O", "B", "B-").
    type_names_per_tag = [tag[1:].split("-", 1)[-1] or "_" for tag in distinct_tags]
    type_names, type_ids_per_tag = np.unique(np.array(type_names_per_tag, dtype=str), return_inverse=True)
    return letters[tag_ids], type_ids_per_tag[tag_ids], type_names.tolist()


def _warn_about_malformed_tags(*tag_arrays):
    """Logs, once per call, the tags seqeval would warn about (it scores them all the same)."""
    distinct_tags = np.unique(np.concatenate(tag_arrays)).tolist()
    malformed = [
        tag for tag in distinct_tags if tag not in _BARE_LETTERS and not tag.startswith(_WELL_FORMED_PREFIXES)
    ]
    if malformed:
        logger.warning("Tags that do not look like entity tags (scored as seqeval does): %s", malformed[:10])


def _chunks(tags):
    """Entities of one flat tag array, which must end with "O".

    Returns:
        `(type_names_of_chunks, starts, ends)` with inclusive `ends`, as three arrays.
    """
    letters, type_ids, type_names = _tag_parts(tags)
    previous_letters = np.concatenate([np.array(["O"]), letters[:-1]])
    previous_type_ids = np.concatenate([[_NO_TYPE], type_ids[:-1]])
    type_changed = previous_type_ids != type_ids

    def letter_in(array, choices):
        return np.isin(array, list(choices))

    chunk_ends_before = (
        letter_in(previous_letters, "ES")
        | (letter_in(previous_letters, "BI") & letter_in(letters, "BSO"))
        | (~letter_in(previous_letters, "O.") & type_changed)
    )
    chunk_starts_here = (
        letter_in(letters, "BS")
        | (letter_in(previous_letters, "ESO") & letter_in(letters, "EI"))
        | (~letter_in(letters, "O.") & type_changed)
    )
    positions = np.arange(len(tags))
    # A chunk ending before position i began at the last start strictly before i (else 0).
    last_start = np.maximum.accumulate(np.where(chunk_starts_here, positions, 0))
    end_markers = np.flatnonzero(chunk_ends_before)
    starts = last_start[end_markers - 1]
    ends = end_markers - 1
    names = np.array(type_names, dtype=str)[type_ids[ends]] if len(ends) else np.array([], dtype=str)
    return names, starts, ends


def _as_sequences(tag_sequences, name):
    """A list of tag sequences; one flat sequence of strings is taken as a single sentence."""
    sequences = list(tag_sequences)
    if sequences and all(isinstance(item, str) for item in sequences):
        return [sequences]
    if any(isinstance(item, str) for item in sequences):
        raise ValueError(f"`{name}` must be a list of tag sequences, not a mix of tags and sequences.")
    return [list(sequence) for sequence in sequences]


def _flatten(sequences):
    """All tags in one array, an "O" after each sentence (the last one closes open chunks)."""
    return np.array(
        list(itertools.chain.from_iterable(sequence + ["O"] for sequence in sequences)) or ["O"], dtype=str
    )


def extract_entities(tags):
    """Entities in one sentence's tags, as seqeval's default mode finds them.

    Args:
        tags: sequence of tag strings for one sentence, e.g. `["B-PER", "I-PER", "O"]`.

    Returns:
        list of `(entity_type, start, end)` with `end` exclusive, in order of position.

    Examples:
    >>> extract_entities(["B-PER", "I-PER", "O", "I-LOC", "S-ORG"])
    [('PER', 0, 2), ('LOC', 3, 4), ('ORG', 4, 5)]
    """
    flat_tags = _flatten(_as_sequences(tags, "tags"))
    _warn_about_malformed_tags(flat_tags)
    names, starts, ends = _chunks(flat_tags)
    return [(str(name), int(start), int(end) + 1) for name, start, end in zip(names, starts, ends)]


def _entity_counts(y_true, y_pred):
    """Per-type counts of gold, predicted and correctly predicted entities.

    Returns:
        `(type_names, true_counts, pred_counts, correct_counts)`, types sorted by name.
    """
    true_sequences = _as_sequences(y_true, "y_true")
    pred_sequences = _as_sequences(y_pred, "y_pred")
    if len(true_sequences) != len(pred_sequences):
        raise ValueError(
            f"`y_true` and `y_pred` must hold the same number of sequences. Received "
            f"{len(true_sequences)} and {len(pred_sequences)}."
        )
    true_lengths = np.array([len(sequence) for sequence in true_sequences], dtype=np.int64)
    pred_lengths = np.array([len(sequence) for sequence in pred_sequences], dtype=np.int64)
    mismatched = np.flatnonzero(true_lengths != pred_lengths)
    if len(mismatched):
        index = int(mismatched[0])
        raise ValueError(
            f"Sequence {index} has {true_lengths[index]} gold tags but {pred_lengths[index]} predicted tags."
        )
    true_tags, pred_tags = _flatten(true_sequences), _flatten(pred_sequences)
    _warn_about_malformed_tags(true_tags, pred_tags)
    true_names, true_starts, true_ends = _chunks(true_tags)
    pred_names, pred_starts, pred_ends = _chunks(pred_tags)
    type_names, type_ids = np.unique(np.concatenate([true_names, pred_names]), return_inverse=True)
    true_type_ids, pred_type_ids = type_ids[: len(true_names)], type_ids[len(true_names) :]
    span = int(true_lengths.sum()) + len(true_lengths) + 1

    def keys(type_ids_, starts, ends):
        return (type_ids_.astype(np.int64) * span + starts) * span + ends

    true_keys = keys(true_type_ids, true_starts, true_ends)
    correct_keys = np.intersect1d(true_keys, keys(pred_type_ids, pred_starts, pred_ends))
    num_types = len(type_names)
    return (
        type_names.tolist(),
        np.bincount(true_type_ids, minlength=num_types),
        np.bincount(pred_type_ids, minlength=num_types),
        np.bincount(correct_keys // (span * span), minlength=num_types),
    )


def _precision_recall_f1(true_counts, pred_counts, correct_counts):
    """Elementwise scores with 0 for undefined ratios, in seqeval's order of operations."""
    true_counts, pred_counts, correct_counts = (
        np.asarray(count, dtype=np.float64) for count in (true_counts, pred_counts, correct_counts)
    )
    precision = np.divide(
        correct_counts, pred_counts, out=np.zeros_like(correct_counts), where=pred_counts > 0
    )
    recall = np.divide(correct_counts, true_counts, out=np.zeros_like(correct_counts), where=true_counts > 0)
    denominator = precision + recall
    f1 = np.divide(
        2.0 * precision * recall, denominator, out=np.zeros_like(denominator), where=denominator > 0
    )
    return precision, recall, f1


def entity_scores(y_true, y_pred):
    """Micro-averaged entity-level precision, recall and F1, equal to seqeval's defaults.

    An entity counts as correct only when its type, first and last token all match. Ratios
    with a zero denominator are 0 (seqeval warns and returns 0 too).

    Args:
        y_true: gold tags, a list of tag sequences (one per sentence); a single flat list of
            tags is read as one sentence.
        y_pred: predicted tags, same number and lengths of sequences as `y_true`.

    Returns:
        dict with float `"precision"`, `"recall"` and `"f1"`, each in [0, 1].

    Examples:
    >>> y_true = [["O", "B-MISC", "I-MISC", "B-MISC", "O"], ["B-PER", "I-PER", "O"]]
    >>> y_pred = [["O", "B-MISC", "I-MISC", "B-MISC", "I-MISC"], ["B-PER", "I-PER", "O"]]
    >>> entity_scores(y_true, y_pred)["f1"]
    0.6666666666666666
    """
    _, true_counts, pred_counts, correct_counts = _entity_counts(y_true, y_pred)
    precision, recall, f1 = _precision_recall_f1(true_counts.sum(), pred_counts.sum(), correct_counts.sum())
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}


def entity_scores_by_type(y_true, y_pred):
    """Entity-level scores for each entity type, as seqeval's `classification_report`.

    Args:
        y_true: gold tags, a list of tag sequences (one per sentence).
        y_pred: predicted tags, same number and lengths of sequences as `y_true`.

    Returns:
        dict from entity type (sorted by name; every type gold or predicted) to a dict with
        float `"precision"`, `"recall"`, `"f1"` and int `"support"` (number of gold entities).

    Examples:
    >>> scores = entity_scores_by_type([["B-PER", "O", "B-LOC"]], [["B-PER", "O", "O"]])
    >>> scores["LOC"]
    {'precision': 0.0, 'recall': 0.0, 'f1': 0.0, 'support': 1}
    """
    type_names, true_counts, pred_counts, correct_counts = _entity_counts(y_true, y_pred)
    precision, recall, f1 = _precision_recall_f1(true_counts, pred_counts, correct_counts)
    return {
        name: {
            "precision": float(precision[index]),
            "recall": float(recall[index]),
            "f1": float(f1[index]),
            "support": int(true_counts[index]),
        }
        for index, name in enumerate(type_names)
    }
