"""One checkpoint format `convert` and the resolver read."""

import dataclasses
import pathlib
from collections.abc import Callable


@dataclasses.dataclass(frozen=True)
class CheckpointFormat:
    """A checkpoint format, as a row of `kbert.checkpoints.formats.CHECKPOINT_FORMATS`.

    Attributes:
        name: short name, stored as `metadata.json`'s "source".
        description: what a folder of this format holds, for error messages.
        detect: folder -> whether it is in this format. Looks at file names (and at
            most one small JSON file), never at weights.
        read: folder -> `CheckpointData`. Must raise before returning anything when the
            checkpoint is incomplete or inconsistent.
        reads_casing: whether `read` takes `lowercase=` (formats that do not record
            whether the vocabulary is cased). For the others, an explicit `lowercase`
            is applied to the tokenizer read.
    """

    name: str
    description: str
    detect: Callable[[pathlib.Path], bool]
    read: Callable[[pathlib.Path], object]
    reads_casing: bool = False
