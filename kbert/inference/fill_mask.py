"""Fill-mask inference: the most probable tokens at each `[MASK]` of a text.

The hot path, for the desktop app's type-as-you-go view: the tokenizer (Rust) gives
ids and offsets -> one padded batch, its length rounded up to a bucket and its
number of masks to a power of two -> one compiled `predict_on_batch` whose masked-LM
head runs at the mask positions only -> softmax and top-k in NumPy -> results with
character offsets. A keystroke that keeps the text within its bucket reuses the
compiled program.
"""

import numpy as np

from kbert.argument_checks import check_positive_int
from kbert.argument_checks import check_text
from kbert.argument_checks import describe_kind
from kbert.argument_checks import describe_value
from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import model_buckets
from kbert.inference.model_io import pad_batch
from kbert.inference.model_io import predict
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.inference.model_io import softmax
from kbert.inference.results import FillMaskResult
from kbert.inference.results import MaskFill
from kbert.inference.results import MaskPrediction
from kbert.inference.inference_engine import engine_model
from kbert.inference.results import substitute_spans
from kbert.preprocessing.length_buckets import power_of_two_bucket
from kbert.preprocessing.length_buckets import length_sorted_batches
from kbert.preprocessing.text_encoding import as_text_list
from kbert.preprocessing.text_encoding import encode_texts
from kbert.tokenizer.bert_tokenizer import display_token


def fill_mask(
    model,
    tokenizer,
    text_or_texts,
    top_k=5,
    targets=None,
    joint=False,
    batch_size=None,
    engine="auto",
    quantize=None,
):
    """Predicts the tokens hidden behind each `[MASK]` of one or several texts.

    Args:
        model: a masked-LM model (`BertMaskedLM`): inputs `token_ids`,
            `segment_ids`, `padding_mask`, `mask_positions` (B, P); output logits
            (B, P, V).
        tokenizer: a `BertTokenizer`; None uses `model.tokenizer`.
        text_or_texts: a string, or a list of strings (or records, a DataFrame
            or a `datasets.Dataset` with a "text" field), each with at least one
            mask token (`tokenizer.mask_token`, "[MASK]") typed literally. Texts
            longer than the model's limit are truncated with a warning, but a
            mask cut off by the truncation is an error.
        top_k: number of candidates per mask.
        targets: optional list of words to score at each mask instead of the
            whole vocabulary (still at most `top_k` of them are returned, most
            probable first; probabilities stay those of the whole vocabulary).
            Each target must be a single vocabulary token after tokenisation; a
            word the tokenizer splits into several pieces raises `ValueError`,
            because the probability of its first piece is not the word's.
        joint: False predicts every mask independently, from the text as given.
            True fills the masks one at a time, the most confident first,
            running the model again with the filled-in token after each step;
            each mask's candidates are those of the step that filled it.
        batch_size: texts per forward pass (None: `inference_batch_size()`).
        engine, quantize: what runs the forward passes, "auto", "keras" or "onnxruntime",
            and with which weights, None or "int8" (`kbert.inference.inference_engine`).

    Returns:
        A `FillMaskResult` for a string, a list of them for a list.

    Examples:

    >>> result = model.fill_mask("The [MASK] sat on the mat.")
    >>> mask = result.masks[0]
    >>> (mask.start, mask.end)
    (4, 10)
    >>> mask.candidates[0].token, round(mask.candidates[0].probability, 2)
    ('cat', 0.41)
    >>> mask.candidates[0].text
    'The cat sat on the mat.'
    """
    tokenizer = resolve_tokenizer(model, tokenizer)
    model = engine_model(model, engine, quantize)
    texts, single = as_text_list(text_or_texts, "text_or_texts")
    top_k = check_positive_int("top_k", top_k)
    batch_size = inference_batch_size(batch_size)
    target_ids = None if targets is None else _target_ids(tokenizer, targets)
    if not isinstance(joint, bool):
        raise ValueError(f"`joint` must be True or False. Received: joint={joint!r}")
    encodings = encode_texts(tokenizer, texts, None, sequence_limit(model, tokenizer))
    check_masks(tokenizer, texts, encodings)
    buckets = model_buckets(model)
    results = [None] * len(texts)
    for rows in length_sorted_batches([len(encoding) for encoding in encodings], batch_size):
        chunk = [encodings[row] for row in rows]
        positions, candidate_ids, candidate_probabilities = _predict_masks(
            model, tokenizer, chunk, buckets, top_k, target_ids, joint
        )
        for index, row in enumerate(rows):
            results[row] = _result(
                tokenizer,
                texts[row],
                encodings[row],
                positions[index],
                candidate_ids[index],
                candidate_probabilities[index],
                joint,
            )
    return results[0] if single else results


def _target_ids(tokenizer, targets):
    """The vocabulary ids of the target words, in order, without repeats."""
    if isinstance(targets, str):
        targets = [targets]
    if isinstance(targets, bytes) or not hasattr(targets, "__iter__"):
        raise ValueError(
            f"`targets` must be a list of words. Received: targets={describe_kind(targets)}"
        )
    targets = list(targets)
    if not targets:
        raise ValueError("`targets` must name at least one word. Received: targets=[]")
    ids = []
    for index, target in enumerate(targets):
        check_text(f"targets[{index}]", target)
        # Two pieces tell a split word: a long target is tokenized no further.
        pieces = tokenizer.tokenize_texts([target], max_pieces=2)[0].tokens
        if len(pieces) != 1 or pieces[0] == tokenizer.unk_token:
            raise ValueError(
                f"Each target must be one token of the vocabulary, but "
                f"{describe_value(target)} tokenizes as {pieces}. A target the tokenizer "
                f"splits cannot be scored at a single [MASK]. Received: targets[{index}]"
            )
        token_id = tokenizer.token_to_id(pieces[0])
        if token_id not in ids:
            ids.append(token_id)
    return np.asarray(ids, dtype=np.int64)


def check_masks(tokenizer, texts, encodings):
    """Every text needs a mask, and truncation must not have removed any."""
    mask_token = tokenizer.mask_token
    for index, (text, encoding) in enumerate(zip(texts, encodings)):
        kept = int(np.count_nonzero(encoding.token_ids == tokenizer.mask_token_id))
        if encoding.truncated:
            # A mask is matched as typed, so the masks cut off are those typed after the
            # last piece kept (the rest of a long text is never tokenized).
            kept_offsets = encoding.offsets[encoding.sequence_ids == 0]
            kept_end = int(kept_offsets[-1, 1]) if len(kept_offsets) else 0
            cut_off = text.count(mask_token, kept_end)
            if cut_off:
                raise ValueError(
                    f"Text {index} is longer than the model's limit of {len(encoding)} "
                    f"tokens and truncating it would cut off {cut_off} of its "
                    f"{kept + cut_off} {mask_token} tokens. Shorten the text around the "
                    f"masks. Received: text_or_texts[{index}]={describe_value(text)}"
                )
        if kept == 0:
            raise ValueError(
                f"Each text must contain at least one {mask_token} to fill, typed as "
                f"{mask_token!r}. Received: text_or_texts[{index}]={describe_value(text)}"
            )


def _mask_positions(token_ids, padding_mask, mask_token_id):
    """`(mask_positions (R, P), counts (R,))`; P is a power of two, padded with 0."""
    is_mask = (token_ids == mask_token_id) & padding_mask.astype(bool)
    counts = is_mask.sum(axis=1)
    rows, columns = np.nonzero(is_mask)
    rank = np.cumsum(is_mask, axis=1)[rows, columns] - 1
    positions = np.zeros((len(token_ids), power_of_two_bucket(counts.max())), dtype=np.int32)
    positions[rows, rank] = columns
    return positions, counts


def _top_candidates(probabilities, top_k, target_ids):
    """Top-k ids and probabilities along the last axis, most probable first."""
    if target_ids is not None:
        scores = probabilities[..., target_ids]
        order = np.argsort(-scores, axis=-1, kind="stable")[..., :top_k]
        return target_ids[order], np.take_along_axis(scores, order, axis=-1)
    top_k = min(top_k, probabilities.shape[-1])
    ids = np.argpartition(-probabilities, top_k - 1, axis=-1)[..., :top_k]
    scores = np.take_along_axis(probabilities, ids, axis=-1)
    order = np.argsort(-scores, axis=-1, kind="stable")
    return np.take_along_axis(ids, order, axis=-1), np.take_along_axis(scores, order, axis=-1)


def _predict_masks(model, tokenizer, encodings, buckets, top_k, target_ids, joint):
    """Runs the model on one batch; returns per row its mask positions and candidates.

    Returns:
        `positions[i]` (the token index of each mask of row i, in order) and
        `candidate_ids[i]`, `candidate_probabilities[i]` of shape (masks, k).
    """
    inputs = pad_batch(tokenizer, encodings, buckets)
    inputs["mask_positions"], counts = _mask_positions(
        inputs["token_ids"], inputs["padding_mask"], tokenizer.mask_token_id
    )
    if joint:
        ids, probabilities = _fill_jointly(model, inputs, counts, top_k, target_ids)
    else:
        logits = predict(model, inputs)  # (R, P, V)
        ids, probabilities = _top_candidates(softmax(logits), top_k, target_ids)
    rows = range(len(encodings))
    return (
        [inputs["mask_positions"][row, : counts[row]] for row in rows],
        [ids[row, : counts[row]] for row in rows],
        [probabilities[row, : counts[row]] for row in rows],
    )


def _fill_jointly(model, inputs, counts, top_k, target_ids):
    """Fills the masks of every row one per step, each row's most confident first."""
    inputs = dict(inputs)
    inputs["token_ids"] = inputs["token_ids"].copy()
    mask_positions = inputs["mask_positions"]
    slots = mask_positions.shape[1]
    remaining = np.arange(slots)[None, :] < counts[:, None]  # (R, P)
    chosen_ids = chosen_probabilities = None
    for _ in range(int(counts.max())):
        # Filled masks keep their slots, so every step has the same shapes and
        # reuses one compiled program.
        ids, probabilities = _top_candidates(
            softmax(predict(model, inputs)), top_k, target_ids
        )  # (R, P, k) each
        if chosen_ids is None:
            chosen_ids = np.zeros_like(ids)
            chosen_probabilities = np.zeros_like(probabilities)
        confidence = np.where(remaining, probabilities[..., 0], -1.0)
        active = np.flatnonzero(remaining.any(axis=1))
        picked = np.argmax(confidence, axis=1)[active]
        chosen_ids[active, picked] = ids[active, picked]
        chosen_probabilities[active, picked] = probabilities[active, picked]
        inputs["token_ids"][active, mask_positions[active, picked]] = ids[active, picked, 0]
        remaining[active, picked] = False
    return chosen_ids, chosen_probabilities


def _result(tokenizer, text, encoding, positions, ids, probabilities, joint):
    spans = [tuple(int(offset) for offset in encoding.offsets[position]) for position in positions]
    tokens = [[tokenizer.id_to_token(int(token_id)) for token_id in row] for row in ids]
    chosen = [display_token(row[0]) for row in tokens]
    masks = []
    for index, (position, (start, end)) in enumerate(zip(positions, spans)):
        candidates = []
        for token, token_id, probability in zip(tokens[index], ids[index], probabilities[index]):
            if joint:
                # The other masks hold the tokens chosen for them.
                replacements = chosen[:index] + [display_token(token)] + chosen[index + 1 :]
                filled = substitute_spans(text, spans, replacements)
            else:
                filled = substitute_spans(text, [(start, end)], [display_token(token)])
            candidates.append(
                MaskPrediction(
                    token=token,
                    token_id=int(token_id),
                    probability=float(probability),
                    text=filled,
                )
            )
        masks.append(
            MaskFill(position=int(position), start=start, end=end, candidates=tuple(candidates))
        )
    return FillMaskResult(text=text, masks=tuple(masks))
