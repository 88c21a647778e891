"""A checkpoint format's names for kbert's variables: one table, read in both directions.

Each format declares, for every kbert variable template of
`kbert.architecture.bert_layout` it carries, the name(s) it stores the numbers under and
how they are laid out. Import (`WeightMap.read`) and export (`WeightMap.write`) both
read that table, as keras-hub's converters read their `port_weight` tables; nothing
else in `kbert.checkpoints` walks the layout.

A table entry is a name (the same array under another name) or a tuple
`(layout, name, ...)`: the kbert array is split along its last axis into one equal part
per name (kbert fuses query, key and value into one (H, 3H) projection; other formats
keep three), and each part is stored as `layout` says:

- `SAME`: as kbert holds it.
- `TRANSPOSED`: a Keras (in, out) kernel stored as a PyTorch (out, in) weight.
- `SPLIT_HEADS`: the last axis H stored as (num_heads, head_size) (keras-hub's
  `EinsumDense` query/key/value kernels (H, N, D) and biases (N, D)).
- `SPLIT_HEADS_FIRST`: the first axis split so (keras-hub's attention output kernel
  (N, D, H) for kbert's (H, H)).

Every conversion is a reshape, a transpose or a concatenation: exact.
"""

import re

import numpy as np

SAME = "same"
TRANSPOSED = "transposed"
SPLIT_HEADS = "split_heads"
SPLIT_HEADS_FIRST = "split_heads_first"
LAYOUTS = (SAME, TRANSPOSED, SPLIT_HEADS, SPLIT_HEADS_FIRST)
# An encoder block's index in every format's names: kbert's and keras-hub's
# `transformer_layer_3/`, transformers' `encoder.layer.3.`, Google's `encoder/layer_3/`.
_LAYER_INDEX = re.compile(r"(?:^|[./])(?:transformer_)?layer[._](\d+)(?:[./]|$)")


def stored_layer_count(names):
    """How many encoder blocks the tensor `names` hold weights for (highest index + 1)."""
    matches = (_LAYER_INDEX.search(name) for name in names)
    indices = [int(match.group(1)) for match in matches if match]
    return max(indices) + 1 if indices else 0


def check_layer_count(names, config, location, against):
    """Refuses tensors holding more encoder blocks than `config.num_layers` says.

    Without this, the blocks beyond the config's count would be dropped without a word
    and the model would load as a smaller one.
    """
    held = stored_layer_count(names)
    if held > config.num_layers:
        raise ValueError(
            f"Cannot import {location}: its weights hold {held} transformer layers but "
            f"{against} says num_layers={config.num_layers}; fix the config's layer count "
            "or use the checkpoint it belongs to."
        )


def _stored_shape(shape, layout, config):
    heads = (config.num_heads, config.head_size)
    if layout == TRANSPOSED:
        return tuple(reversed(shape))
    if layout == SPLIT_HEADS:
        return (*shape[:-1], *heads)
    if layout == SPLIT_HEADS_FIRST:
        return (*heads, *shape[1:])
    return tuple(shape)


def _to_kbert(array, layout):
    if layout == TRANSPOSED:
        return array.T
    if layout == SPLIT_HEADS:
        return array.reshape(*array.shape[:-2], -1)
    if layout == SPLIT_HEADS_FIRST:
        return array.reshape(-1, *array.shape[2:])
    return array


def _from_kbert(array, layout, config):
    if layout == TRANSPOSED:
        return array.T
    if layout in (SPLIT_HEADS, SPLIT_HEADS_FIRST):
        return array.reshape(_stored_shape(array.shape, layout, config))
    return array


class WeightMap:
    """How a checkpoint format names and lays out kbert's variables.

    Args:
        table: `{kbert variable template: entry}`, templates as in
            `LayoutVariable.template` ("backbone/transformer_layer_{layer}/..."); each
            entry a name template or `(layout, name, ...)` (see the module docstring).
            Name templates may use `{layer}`, where the encoder block's key goes.
        layer_key: block index -> what `{layer}` stands for in this format's names; by
            default the index itself.

    Example:

    >>> weights = WeightMap({"head/span_head/kernel": (TRANSPOSED, "qa_outputs.weight")})
    """

    def __init__(self, table, layer_key=str):
        self._layer_key = layer_key
        self._entries = {}
        for template, entry in table.items():
            layout, *names = (SAME, entry) if isinstance(entry, str) else entry
            if layout not in LAYOUTS or not names or not all(isinstance(n, str) for n in names):
                raise ValueError(
                    f"The entry for {template!r} must be a name or (layout, name, ...) with a "
                    f"layout in {LAYOUTS}. Received: {entry!r}"
                )
            self._entries[template] = (layout, tuple(names))

    def covers(self, variable):
        """Whether the format stores `variable` (a `LayoutVariable`)."""
        return variable.template in self._entries

    def _entry(self, variable):
        try:
            return self._entries[variable.template]
        except KeyError:
            raise ValueError(f"This format has no name for {variable.path!r}.") from None

    def names(self, variable):
        """The names the format stores `variable` under."""
        _, names = self._entry(variable)
        if variable.layer is None:
            return names
        return tuple(name.format(layer=self._layer_key(variable.layer)) for name in names)

    def stored_shapes(self, variable, config):
        """The shape of each of `names(variable)`, for the `BertConfig` `config`."""
        layout, names = self._entry(variable)
        part = (*variable.shape[:-1], variable.shape[-1] // len(names))
        return tuple(_stored_shape(part, layout, config) for _ in names)

    def to_kbert(self, variable, arrays, config):
        """The kbert array of `variable` from the format's arrays (in `names` order)."""
        layout, _ = self._entry(variable)
        parts = [_to_kbert(np.asarray(array, np.float32), layout) for array in arrays]
        value = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)
        return np.ascontiguousarray(value)

    def from_kbert(self, variable, value, config):
        """`{name: array}`: the format's arrays for the kbert array `value` of `variable`."""
        layout, _ = self._entry(variable)
        names = self.names(variable)
        parts = np.split(np.asarray(value, np.float32), len(names), axis=-1)
        return {
            name: np.ascontiguousarray(_from_kbert(part, layout, config))
            for name, part in zip(names, parts, strict=True)
        }

    def read(self, variables, tensors, config, against):
        """`{kbert path: array}` for `variables`, read from `tensors` (a `StoredTensors`).

        Every name and shape is checked against the header first; only when all of them
        fit is any tensor read, so a bad file raises before anything is allocated.

        Args:
            variables: the `LayoutVariable`s to read.
            tensors: the checkpoint's `StoredTensors`.
            config: the model's `BertConfig`.
            against: what the tensors must match, for the message ("its config.json").

        Raises:
            ValueError: listing every missing or mis-shaped tensor, each named as the
                checkpoint spells it, with the shape expected and the kbert variable.
        """
        check_layer_count(tensors.shapes, config, tensors.location, against)
        problems = []
        for variable in variables:
            for name, expected in zip(
                self.names(variable), self.stored_shapes(variable, config), strict=True
            ):
                shown = tensors.display(name)
                if name not in tensors:
                    problems.append(
                        f"missing {tensors.noun} {shown!r} (for kbert variable "
                        f"{variable.path!r}, expected shape {expected})"
                    )
                elif tensors.shapes[name] != expected:
                    problems.append(
                        f"{tensors.noun} {shown!r} has shape {tensors.shapes[name]}, expected "
                        f"{expected} (for kbert variable {variable.path!r})"
                    )
                elif tensors.problem(name):
                    problems.append(f"{tensors.noun} {shown!r} {tensors.problem(name)}")
        if problems:
            raise ValueError(
                f"Cannot import {tensors.location}: its {tensors.noun}s do not match "
                f"{against}:\n  " + "\n  ".join(problems)
            )
        return {
            variable.path: self.to_kbert(
                variable, [tensors.read(name) for name in self.names(variable)], config
            )
            for variable in variables
        }

    def write(self, variables, weights, config):
        """`{name: float32 array}`: the format's tensors for `weights` (`{kbert path: array}`)."""
        tensors = {}
        for variable in variables:
            tensors.update(self.from_kbert(variable, weights[variable.path], config))
        return tensors
