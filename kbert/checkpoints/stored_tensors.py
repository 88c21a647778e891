"""A checkpoint's tensors as its header declares them, read one by one on demand."""

import logging

logger = logging.getLogger("kbert.checkpoints")


class StoredTensors:
    """The tensors of a checkpoint: shapes known from its header before any data is read.

    Args:
        location: the folder or file the tensors are in, for messages.
        shapes: `{name: shape tuple}` from the header.
        reader: name -> the tensor as a float32 NumPy array; called once per name,
            only after every shape has been checked.
        noun: what the format calls a tensor ("weight", "variable").
        display: optional name -> how the checkpoint spells (or would spell) it, where
            that differs from the names of `shapes`.
        check: optional name -> a problem (a string) or None, for what besides its
            shape makes a tensor unusable (a dtype, a size beyond the data).
    """

    def __init__(self, location, shapes, reader, noun="weight", display=None, check=None):
        self.location = location
        self.shapes = {name: tuple(shape) for name, shape in shapes.items()}
        self._reader = reader
        self.noun = noun
        self._display = display
        self._check = check
        self.used = set()

    def __contains__(self, name):
        return name in self.shapes

    def display(self, name):
        """How `name` is (or would be) spelled in the checkpoint."""
        return self._display(name) if self._display is not None else name

    def problem(self, name):
        """What makes the tensor `name` unusable besides its shape, or None."""
        return self._check(name) if self._check is not None else None

    def read(self, name):
        self.used.add(name)
        return self._reader(name)

    def warn_unused(self, ignored=lambda name: False):
        """Logs the tensors that were not read, except those `ignored(name)` says carry nothing."""
        unused = sorted(
            self.display(name)
            for name in self.shapes
            if name not in self.used and not ignored(name)
        )
        if unused:
            logger.warning(
                "%s: %d %s(s) in the checkpoint were not imported: %s",
                self.location,
                len(unused),
                self.noun,
                unused,
            )
