"""Fresh masked-LM masks at training time, inside the compiled train step."""

import keras
import numpy as np
from keras import ops

from kbert.preprocessing.masking import (
    MASK_TOKEN_FRACTION,
    RANDOM_TOKEN_FRACTION,
    check_masking_arguments,
    mask_tokens,
    special_token_ids_of,
)


@keras.saving.register_keras_serializable(package="kbert")
class DynamicMasking(keras.layers.Layer):
    """Masks a batch of unmasked sequences with BERT's rule, every call afresh.

    RoBERTa's dynamic masking: the instances are stored unmasked (`kbert
    create-pretraining-data --dynamic-masking`) and every epoch sees new masks. The
    rule is that of `kbert.preprocessing.masking.mask_tokens`: `round(masked_lm_prob *
    n)` of the `n` maskable tokens of a row (at least 1, at most
    `max_predictions_per_seq`), then 80% `[MASK]`, 10% random token, 10% unchanged.
    Special tokens are never chosen.

    `call` uses `keras.ops` and `keras.random` only, with output shapes fixed by
    `(B, L)` and `P = max_predictions_per_seq`, so it runs inside a jitted train step
    on every backend and compiles once per sequence length. The random state lives in
    the layer's `SeedGenerator`, a non-trainable variable: make the layer an attribute
    of the model so the trainer carries that state through the compiled step.
    `mask_numpy` is the same rule on the host, for an input pipeline.

    Whole-word masking is offered by `mask_numpy` only (it walks words greedily);
    `call` masks word pieces independently.

    Args:
        vocabulary_size: the number of token ids.
        mask_token_id: the id of `[MASK]`.
        special_token_ids: ids never masked nor drawn as random replacements; at least
            `[PAD]`, `[CLS]` and `[SEP]`.
        masked_lm_prob: the fraction of maskable tokens to predict.
        max_predictions_per_seq: `P`, the width of the `mask_*` outputs.
        seed: an int seed for the layer's `SeedGenerator`, or None.

    Call arguments:
        token_ids: int tensor `(B, L)`, unmasked rows (one instance or several packed).

    Returns:
        A dict: `token_ids` `(B, L)` int32 with the replacements made; `mask_positions`
        `(B, P)` int32, chosen positions in increasing order, then zeros; `mask_ids`
        `(B, P)` int32, the original tokens there; `mask_weights` `(B, P)` float32,
        1 on chosen positions and 0 on padding slots.

    Examples:

    >>> masking = DynamicMasking.from_tokenizer(tokenizer, seed=1)
    >>> masked = masking(batch["token_ids"])
    >>> masked["mask_positions"].shape
    (32, 20)
    """

    def __init__(
        self,
        vocabulary_size,
        mask_token_id,
        special_token_ids,
        masked_lm_prob=0.15,
        max_predictions_per_seq=20,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        special_table, replacement_ids = check_masking_arguments(
            vocabulary_size,
            mask_token_id,
            special_token_ids,
            masked_lm_prob,
            max_predictions_per_seq,
        )
        self.vocabulary_size = int(vocabulary_size)
        self.mask_token_id = int(mask_token_id)
        self.special_token_ids = sorted(int(index) for index in set(special_token_ids))
        self.masked_lm_prob = float(masked_lm_prob)
        self.max_predictions_per_seq = int(max_predictions_per_seq)
        self.seed = seed
        self._special_table = special_table.astype(np.int32)
        self._replacement_ids = replacement_ids
        self.seed_generator = keras.random.SeedGenerator(seed, name="masking_seed")
        self.built = True

    @classmethod
    def from_tokenizer(cls, tokenizer, **kwargs):
        """A `DynamicMasking` for the ids of a `BertTokenizer` (see `special_token_ids_of`)."""
        return cls(
            vocabulary_size=tokenizer.vocabulary_size,
            mask_token_id=tokenizer.mask_token_id,
            special_token_ids=special_token_ids_of(tokenizer),
            **kwargs,
        )

    def call(self, token_ids):
        token_ids = ops.cast(token_ids, "int32")
        length = token_ids.shape[1]
        if length is None:
            raise ValueError(
                "DynamicMasking needs a static sequence length L. "
                f"Received: token_ids with shape {token_ids.shape}"
            )
        shape = ops.shape(token_ids)
        slots_wanted = self.max_predictions_per_seq
        candidate = ops.equal(ops.take(ops.convert_to_tensor(self._special_table), token_ids), 0)
        num_candidates = ops.sum(ops.cast(candidate, "int32"), axis=1)  # (B,)
        budget = ops.cast(
            ops.round(ops.cast(num_candidates, "float32") * np.float32(self.masked_lm_prob)),
            "int32",
        )
        budget = ops.clip(budget, 1, slots_wanted)
        budget = ops.where(num_candidates > 0, budget, 0)  # (B,)

        # One draw for all randomness: each random-number op takes about a second to
        # compile on XLA CPU, and this layer may also run eagerly. Row 0 orders the tokens, row 1 picks
        # [MASK]/random/unchanged, row 2 picks the random token.
        draws = keras.random.uniform((3, *shape), seed=self.seed_generator)  # (3, B, L)
        # The `budget` lowest random scores of the maskable tokens are chosen.
        scores = ops.where(candidate, draws[0], 2.0)  # (B, L)
        slots = min(slots_wanted, length)
        _, order = ops.top_k(-scores, k=slots)  # (B, slots) positions, lowest score first
        order = ops.cast(order, "int32")
        slot_used = ops.arange(slots, dtype="int32")[None, :] < budget[:, None]
        keys = ops.sort(ops.where(slot_used, order, length), axis=-1)
        if slots < slots_wanted:
            keys = ops.pad(keys, [[0, 0], [0, slots_wanted - slots]], constant_values=length)
        used = keys < length  # (B, P)
        mask_positions = ops.where(used, keys, 0)
        hits = ops.logical_and(
            ops.equal(mask_positions[:, :, None], ops.arange(length, dtype="int32")[None, None, :]),
            used[:, :, None],
        )  # (B, P, L)
        chosen = ops.any(hits, axis=1)  # (B, L)

        decision = draws[1]
        num_replacements = len(self._replacement_ids)
        random_index = ops.minimum(
            ops.cast(draws[2] * num_replacements, "int32"), num_replacements - 1
        )
        random_ids = ops.take(ops.convert_to_tensor(self._replacement_ids), random_index)
        masked = ops.where(
            ops.logical_and(chosen, decision < MASK_TOKEN_FRACTION),
            self.mask_token_id,
            token_ids,
        )
        replace_randomly = ops.logical_and(
            ops.logical_and(chosen, decision >= MASK_TOKEN_FRACTION),
            decision < MASK_TOKEN_FRACTION + RANDOM_TOKEN_FRACTION,
        )
        masked = ops.where(replace_randomly, random_ids, masked)
        mask_ids = ops.where(used, ops.take_along_axis(token_ids, mask_positions, axis=1), 0)
        return {
            "token_ids": ops.cast(masked, "int32"),
            "mask_positions": ops.cast(mask_positions, "int32"),
            "mask_ids": ops.cast(mask_ids, "int32"),
            "mask_weights": ops.cast(used, "float32"),
        }

    def mask_numpy(self, token_ids, rng, word_continuation=None):
        """The same masking in numpy with an explicit `numpy.random.Generator`.

        Args:
            token_ids: int array `(B, L)`.
            rng: a `numpy.random.Generator`.
            word_continuation: optional bool array `(B, L)`, True on `##` pieces, for
                whole-word masking (see `kbert.preprocessing.masking.mask_tokens`).

        Returns:
            The dict of `call`, as numpy arrays.
        """
        return mask_tokens(
            token_ids,
            rng,
            mask_token_id=self.mask_token_id,
            special_token_ids=self.special_token_ids,
            vocabulary_size=self.vocabulary_size,
            masked_lm_prob=self.masked_lm_prob,
            max_predictions_per_seq=self.max_predictions_per_seq,
            word_continuation=word_continuation,
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "mask_token_id": self.mask_token_id,
                "special_token_ids": self.special_token_ids,
                "masked_lm_prob": self.masked_lm_prob,
                "max_predictions_per_seq": self.max_predictions_per_seq,
                "seed": self.seed,
            }
        )
        return config
