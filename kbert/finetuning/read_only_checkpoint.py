"""The training checkpoint as the processes of a multi-process run but the first see it."""


class ReadOnlyCheckpoint:
    """A `TrainingCheckpoint` that is read but never written (by the processes of a
    multi-process run but the first, which writes the checkpoint of every process).

    Args:
        checkpoint: the `TrainingCheckpoint` to read.
    """

    def __init__(self, checkpoint):
        self._checkpoint = checkpoint

    def __getattr__(self, name):
        return getattr(self._checkpoint, name)

    def save(self, model, state):
        """The first process writes the checkpoint of every process."""
