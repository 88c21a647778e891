"""Everything needed to resume fine-tuning, in one file replaced atomically."""

import hashlib
import json
import pathlib

import keras
import numpy as np

from kbert.checkpoints.weights_file import read_weights
from kbert.checkpoints.weights_file import write_weights
from kbert.files.atomic_write import atomic_path
from kbert.files.atomic_write import remove_stale_temporaries
from kbert.files.bounded_reader import parse_json

CHECKPOINT_FORMAT_VERSION = 2

# The JSON state travels as UTF-8 bytes in the weights file, so that one file (written
# beside its target, then renamed over it) holds the whole checkpoint: a crash leaves
# either the previous checkpoint or the new one, never a mix.
_STATE_KEY = "state_json"
# The SHA-256 of every other dataset (names, dtypes, shapes and bytes, the state
# included), computed from the arrays as written and checked on every read: flipped
# bits anywhere in the data are refused instead of resumed into a broken model.
_DIGEST_KEY = "content_sha256"
# Plain words: the app shows this sentence as it is.
_REMEDY = "delete it to start the run again, or start a new run in an empty folder"


class TrainingCheckpoint:
    """A training checkpoint: model variables, optimizer variables and a JSON state.

    The model variables include the random-seed states of the dropout layers
    (`model.variables`, not only `model.weights`), so dropout continues where it
    stopped. The metric variables (Keras' running loss and metric totals of the
    epoch in progress) are kept too: `add_restored_metrics` adds them back once the
    resumed `fit` has trained its first batch, so a resumed epoch reports what an
    uninterrupted one does. The file is kbert's HDF5 weights format (plain numeric arrays, read
    with the same checks as presets), written through `kbert.files.atomic_path`: a
    temporary `.training_checkpoint.h5.tmp-PID-...` beside it, renamed over it. A
    temporary left by a killed run is deleted by the next save or read
    (`remove_stale_files`); a full disk is one `OSError` with the previous checkpoint
    intact. The file carries the SHA-256 of its contents, checked on every read: a
    damaged checkpoint, or one holding NaN or infinite values, is refused in one
    sentence naming the file and the remedy (delete it, or start without resuming).

    Args:
        path: the checkpoint file.
    """

    def __init__(self, path):
        self.path = pathlib.Path(path)
        # The metric values of the last `restore`, until `add_restored_metrics` uses them.
        self._restored_metrics = None

    def exists(self):
        return self.path.is_file()

    def remove_stale_files(self):
        """Deletes temporaries of this checkpoint left by processes that no longer run."""
        return remove_stale_temporaries(self.path)

    def save(self, model, state):
        """Writes the variables of `model` and its optimizer with the JSON-able `state`.

        On JAX, call this between training steps only after `model.jax_state_sync()`
        (done here): during `fit`, JAX keeps the live state outside the variables.
        """
        if hasattr(model, "jax_state_sync"):
            model.jax_state_sync()
        groups = {
            "model": model.variables,
            "optimizer": model.optimizer.variables if model.optimizer else [],
            "metrics": list(getattr(model, "metrics_variables", [])),
        }
        state = dict(state)
        state["format_version"] = CHECKPOINT_FORMAT_VERSION
        for prefix, variables in groups.items():
            state[f"{prefix}_variables"] = _describe(variables)
        arrays = {_STATE_KEY: np.frombuffer(json.dumps(state).encode("utf-8"), dtype=np.uint8)}
        for prefix, variables in groups.items():
            for index, variable in enumerate(variables):
                arrays[f"{prefix}/{index:06d}"] = keras.ops.convert_to_numpy(variable)
        arrays[_DIGEST_KEY] = np.frombuffer(content_digest(arrays).encode("ascii"), np.uint8)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.path) as temporary:
            write_weights(temporary, arrays)

    def read_state(self):
        """The JSON state of the checkpoint, without loading any variable."""
        state, _ = self._read()
        return state

    def restore(self, model):
        """Assigns the checkpoint's variables to `model` and its (compiled) optimizer.

        Returns:
            The JSON state.

        Raises:
            ValueError: when the checkpoint's variables do not fit the model.
        """
        state, arrays = self._read()
        optimizer = model.optimizer
        if not optimizer.built:
            optimizer.build(model.trainable_variables)
        for prefix, variables in (("model", model.variables), ("optimizer", optimizer.variables)):
            expected = state[f"{prefix}_variables"]
            found = _describe(variables)
            if [shape for _, shape in expected] != [shape for _, shape in found]:
                raise ValueError(
                    f"The training checkpoint {str(self.path)!r} does not fit this model: it "
                    f"holds {len(expected)} {prefix} variables, the model has {len(found)} "
                    f"(first difference: {_first_difference(expected, found)})."
                )
            for index, variable in enumerate(variables):
                variable.assign(arrays[f"{prefix}/{index:06d}"])
        described = state.get("metrics_variables")
        self._restored_metrics = None
        if described is not None:
            self._restored_metrics = (
                [shape for _, shape in described],
                [arrays[f"metrics/{index:06d}"] for index in range(len(described))],
            )
        return state

    def add_restored_metrics(self, model):
        """Adds the metric totals of the last `restore` to `model`'s metrics.

        Call it from `on_train_batch_end` of the first batch a resumed `fit` trains
        (and only when resuming inside an epoch): by then every backend has built the
        metrics (TensorFlow builds them while tracing that batch). Keras' losses and
        accuracies keep sums and counts, so adding the saved ones gives exactly the
        uninterrupted run's totals. A checkpoint without metrics, or for other
        metrics, adds nothing.

        Returns:
            Whether the totals were added.
        """
        restored, self._restored_metrics = self._restored_metrics, None
        if restored is None:
            return False
        shapes, values = restored
        if hasattr(model, "jax_state_sync"):
            # During `fit`, JAX keeps the live values outside the variables; after the
            # sync the next step reads them back from the variables.
            model.jax_state_sync()
        variables = list(model.metrics_variables)
        if shapes != [list(variable.shape) for variable in variables]:
            return False
        for variable, value in zip(variables, values):
            variable.assign(variable + keras.ops.convert_to_tensor(value, variable.dtype))
        return True

    def _read(self):
        self.remove_stale_files()
        if not self.exists():
            raise ValueError(f"No training checkpoint at {str(self.path)!r}.")
        try:
            arrays = read_weights(self.path)
        except ValueError as error:
            self._refuse(f"it cannot be read ({str(error).rstrip('.')})")
        if _STATE_KEY not in arrays:
            self._refuse("it is not a kbert training checkpoint")
        if _DIGEST_KEY not in arrays:
            self._refuse(f"it has no checksum (format {CHECKPOINT_FORMAT_VERSION} has one)")
        recorded = np.asarray(arrays.pop(_DIGEST_KEY)).tobytes().decode("ascii", "replace")
        if recorded != content_digest(arrays):
            self._refuse("its contents do not match the SHA-256 recorded when it was written")
        state = parse_json(np.asarray(arrays.pop(_STATE_KEY)).tobytes(), self.path)
        if not isinstance(state, dict):
            self._refuse("its state is not a JSON object")
        if state.get("format_version") != CHECKPOINT_FORMAT_VERSION:
            self._refuse(
                f"it has checkpoint format {state.get('format_version')!r} and this kbert "
                f"reads format {CHECKPOINT_FORMAT_VERSION}"
            )
        for name, array in arrays.items():
            if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
                self._refuse(f"its variable {name} holds NaN or infinite values")
        return state, arrays

    def _refuse(self, reason):
        raise ValueError(
            f"Cannot resume from the training checkpoint {str(self.path)!r}: {reason}; "
            f"{_REMEDY}."
        ) from None


def content_digest(arrays):
    """The SHA-256 (hex) of `{name: array}`: every name, dtype, shape and byte, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        if name == _DIGEST_KEY:
            continue
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode("utf-8"))
        digest.update(array.tobytes())
    return digest.hexdigest()


def _describe(variables):
    return [[variable.path, list(variable.shape)] for variable in variables]


def _first_difference(expected, found):
    for index, (old, new) in enumerate(zip(expected, found)):
        if old[1] != new[1]:
            return f"variable {index}: {old[0]} {old[1]} vs {new[0]} {new[1]}"
    return "a different number of variables"
