"""Packs pretraining instances into full rows: several instances per row, no padding wasted."""

import numpy as np

from kbert.argument_checks import check_integer

# MLPerf's BERT packs at most 3 sequences per row: with BERT's length distribution more
# rarely fit, and each one costs a [CLS] slot of next-sentence work.
DEFAULT_SEQUENCES_PER_ROW = 3


class SequencePacker:
    """Groups instances into rows of `sequence_length` tokens, `max_sequences_per_row` at most.

    `plan` chooses the groups by best-fit decreasing on the instances' lengths: the
    longest instance first, each into the open row it fills best (the one with the
    least room left that still holds it), a new row when none does. Instances of the
    same length are taken in a seeded random order, so the groups are a function of
    the lengths and the seed only. `pack` then lays each group out as one packed row
    (see `pack` for the arrays).

    The share of real tokens in the rows, the fill factor, goes from
    `sum(lengths) / (N * L)` unpacked to `sum(lengths) / (rows * L)` packed; the work
    per real token falls by about the ratio of the two.

    Args:
        sequence_length: `L`, the row length (the instances' own padded length).
        max_sequences_per_row: `P`, the most instances in one row.

    Examples:

    >>> packer = SequencePacker(128)
    >>> rows = packer.plan(arrays["lengths"], seed=[12345, 0])
    >>> packed = packer.pack(arrays, rows)
    >>> packed["token_ids"].shape, packed["nsp_labels"].shape
    ((412, 128), (412, 3))
    """

    def __init__(self, sequence_length, max_sequences_per_row=DEFAULT_SEQUENCES_PER_ROW):
        check_integer("sequence_length", sequence_length, 1)
        check_integer("max_sequences_per_row", max_sequences_per_row, 1)
        self.sequence_length = int(sequence_length)
        self.max_sequences_per_row = int(max_sequences_per_row)

    def plan(self, lengths, seed=None):
        """The instances of each packed row.

        Args:
            lengths: int array `(N,)`, the real tokens of each instance.
            seed: the seed of the order among equal lengths (None: stored order).

        Returns:
            Int64 array `(rows, P)` of indices into `lengths`, each index exactly once,
            the slots of a row filled from the left and -1 in unused ones.
        """
        lengths = np.asarray(lengths).astype(np.int64).reshape(-1)
        too_long = (lengths < 1) | (lengths > self.sequence_length)
        if np.any(too_long):
            index = int(np.argmax(too_long))
            raise ValueError(
                f"Instance lengths must be in [1, {self.sequence_length}] to pack them into "
                f"rows of {self.sequence_length}. Received: lengths[{index}]={lengths[index]}"
            )
        order = np.arange(len(lengths))
        if seed is not None:
            order = np.random.default_rng(seed).permutation(len(lengths))
        order = order[np.argsort(-lengths[order], kind="stable")]

        length = self.sequence_length
        # Open rows (fewer than P members) by the room they have left; `has_room[r]`
        # says whether any open row has exactly `r` tokens of room.
        open_rows = [[] for _ in range(length + 1)]
        has_room = np.zeros(length + 1, bool)
        members = []
        for instance in order:
            size = int(lengths[instance])
            fitting = np.flatnonzero(has_room[size:])
            if fitting.size:
                room = size + int(fitting[0])
                row = open_rows[room].pop()
                has_room[room] = bool(open_rows[room])
            else:
                room, row = length, len(members)
                members.append([])
            members[row].append(int(instance))
            room -= size
            if room > 0 and len(members[row]) < self.max_sequences_per_row:
                open_rows[room].append(row)
                has_room[room] = True
        rows = np.full((len(members), self.max_sequences_per_row), -1, np.int64)
        for row, instances in enumerate(members):
            rows[row, : len(instances)] = instances
        return rows

    def pack(self, arrays, rows, predictions=None):
        """The packed rows of `plan`'s groups, as model inputs and targets.

        Args:
            arrays: a shard's instances, as `ShardReader` stores them: `token_ids`,
                `segment_ids` `(N, L)`, `lengths`, `nsp_labels` `(N,)` and, for masked
                data, `mask_positions`, `mask_ids`, `mask_weights` `(N, M)`.
            rows: `plan`'s `(R, P)` array.
            predictions: None, or `W`, the prediction slots of a packed row: the real
                predictions move to the front, in order, and the rest is cut (it must
                be at least `prediction_counts(...).max()`). A row of L tokens has
                about as many predictions as an unpacked full one, far fewer than
                `P * M`, and the masked-LM head's cost grows with the slots.

        Returns:
            A dict of numpy arrays: `token_ids`, `segment_ids`, `sequence_index` `(R, L)`
            int32 (1 for the first instance of the row, ..., 0 for padding; padding
            takes the stored padding token), `padding_mask` `(R, L)` bool, `cls_positions`
            `(R, P)` int32 (each instance's first token, 0 in unused slots),
            `nsp_labels` `(R, P)` int32, `nsp_weights` `(R, P)` float32 (1 for real
            instances) and, for masked data, `mask_positions`, `mask_ids` `(R, P * M)`
            int32 and `mask_weights` `(R, P * M)` float32: instance `k`'s predictions
            in slots `[k * M, (k + 1) * M)` (with `predictions`: `(R, W)`, the real
            ones first), positions counted from the row's start.
        """
        rows = self._checked_rows(rows, arrays["token_ids"])
        used = rows >= 0  # (R, P)
        instances = np.where(used, rows, 0)  # (R, P), unused slots read instance 0
        starts, slot, real = self._layout(rows, instances, arrays["lengths"])
        slot_in_range = np.minimum(slot, self.max_sequences_per_row - 1)
        source = np.take_along_axis(instances, slot_in_range, axis=1)  # (R, L)
        offset = np.arange(self.sequence_length)[None, :] - np.take_along_axis(
            starts, slot_in_range, axis=1
        )
        # Padding reads the last position of the row's first instance, which is padding
        # whenever the row has any (that instance is shorter than the row).
        source = np.where(real, source, instances[:, :1])
        offset = np.where(real, offset, self.sequence_length - 1)
        packed = {
            "token_ids": arrays["token_ids"][source, offset].astype(np.int32),
            "segment_ids": arrays["segment_ids"][source, offset].astype(np.int32),
            "sequence_index": np.where(real, slot + 1, 0).astype(np.int32),
            "padding_mask": real,
            "cls_positions": np.where(used, starts, 0).astype(np.int32),
            "nsp_labels": np.where(used, arrays["nsp_labels"][instances], 0).astype(np.int32),
            "nsp_weights": used.astype(np.float32),
        }
        if "mask_positions" in arrays:
            packed.update(_packed_predictions(arrays, instances, used, starts, predictions))
        return packed

    def _checked_rows(self, rows, token_ids):
        rows = np.asarray(rows, np.int64)
        if rows.ndim != 2 or rows.shape[1] != self.max_sequences_per_row:
            raise ValueError(
                f"`rows` must have shape (num_rows, {self.max_sequences_per_row}). "
                f"Received: rows.shape={rows.shape}"
            )
        if token_ids.shape[1] != self.sequence_length:
            raise ValueError(
                f"The instances must be {self.sequence_length} tokens long. Received: "
                f"token_ids.shape={token_ids.shape}"
            )
        return rows

    def _layout(self, rows, instances, lengths):
        """`(starts, slot, real)`: each slot's first position (R, P), and for every
        position (R, L) its slot (P for padding) and whether it is a real token."""
        length = self.sequence_length
        slot_lengths = np.where(rows >= 0, lengths[instances], 0).astype(np.int64)
        ends = np.cumsum(slot_lengths, axis=1)  # (R, P)
        if np.any(ends[:, -1] > length):
            row = int(np.argmax(ends[:, -1] > length))
            raise ValueError(
                f"Row {row} of `rows` holds {int(ends[row, -1])} tokens, more than {length}."
            )
        positions = np.arange(length)
        # The slot of every position: how many instances end at or before it (P: padding).
        slot = np.sum(positions[None, :, None] >= ends[:, None, :], axis=-1)  # (R, L)
        return ends - slot_lengths, slot, slot < self.max_sequences_per_row

    @staticmethod
    def prediction_counts(mask_weights, rows):
        """The real predictions of each packed row: int array `(R,)`."""
        per_instance = np.sum(np.asarray(mask_weights) > 0, axis=1)  # (N,)
        return np.where(rows >= 0, per_instance[np.maximum(rows, 0)], 0).sum(axis=1)

    def fill_factor(self, lengths, num_rows):
        """The share of real tokens in `num_rows` rows holding instances of `lengths`."""
        return float(np.sum(lengths)) / float(max(num_rows, 1) * self.sequence_length)


def _packed_predictions(arrays, instances, used, starts, predictions):
    """The packed rows' `mask_positions`, `mask_ids` and `mask_weights` (see `pack`)."""
    weights = arrays["mask_weights"][instances] * used[:, :, None]  # (R, P, M)
    chosen = weights > 0
    mask_positions = np.where(chosen, arrays["mask_positions"][instances] + starts[:, :, None], 0)
    mask_ids = np.where(chosen, arrays["mask_ids"][instances], 0)
    count = len(instances)
    masks = {
        "mask_positions": mask_positions.reshape(count, -1).astype(np.int32),
        "mask_ids": mask_ids.reshape(count, -1).astype(np.int32),
        "mask_weights": weights.reshape(count, -1).astype(np.float32),
    }
    return masks if predictions is None else _compact(masks, predictions)


def _compact(masks, width):
    """The weighted prediction slots moved to the front (in order), `width` kept."""
    chosen = masks["mask_weights"] > 0
    if np.any(chosen.sum(axis=1) > width):
        raise ValueError(
            f"A packed row has {int(chosen.sum(axis=1).max())} predictions, more than the "
            f"{width} prediction slots. Received: predictions={width}"
        )
    order = np.argsort(~chosen, axis=1, kind="stable")[:, :width]
    return {name: np.take_along_axis(array, order, axis=1) for name, array in masks.items()}
