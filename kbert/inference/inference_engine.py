"""Which engine runs an inference call's forward passes: Keras or ONNX Runtime.

Every high-level call (`classify`, `tag`, `fill_mask`, `answer`, `choose`) takes
`engine="auto" | "keras" | "onnxruntime"` and `quantize=None | "int8"` and hands them
to `engine_model`, which returns what the call then runs: the Keras model itself, a
copy of it quantized to int8 (`model.quantize("int8")`), or an `OnnxRuntimeModel` over
its ONNX graph (dynamically quantized to int8 with
`onnxruntime.quantization.quantize_dynamic` on request). Tokenization, batching and
results are the same code for every engine.

The graph is made once per weights: it is cached under `<cache>/onnx/<checksum>/`
(`$KBERT_CACHE`, else `~/.cache/kbert`), keyed by a sha256 of the model's class and
weights, with a manifest recording its own sha256 (`kbert.inference.onnx_cache_entry`:
the entry's format, how it is written and checked). Of several processes that want it
first, one makes it and the others wait; a graph that is not as recorded is never run,
but made again, with a warning. Within a process the checksum is kept per model while
its weights stay the same objects (on TensorFlow, whose variables change in place, it
is taken on each call).

"auto" picks ONNX Runtime where it was measured faster (`AUTO_PREFERS_ONNX_RUNTIME`,
benchmarks/NOTES.md sections 8 and 11): on a CPU, with onnxruntime installed, on JAX and
PyTorch (on TensorFlow, telling whether a cached graph is still the model's would take a
checksum of every weight on every call); else Keras. For weights small enough that
making or loading the graph takes a fraction of a second (`SYNCHRONOUS_EXPORT_BYTES`),
from the first call: the graph is made (where `onnx` is installed, `can_export`) or
loaded before it answers. Larger models answer on Keras until "auto" has left them alone
for `EXPORT_DELAY_SECONDS`; a daemon thread then makes or loads the graph and its
session, and later calls run it: the app switches between requests, while a one-shot
command, where Keras was measured faster than loading ONNX Runtime, ends first. At exit
a scheduled export is dropped, and one writing its graph is finished (a process killed
meanwhile leaves no record: a graph without one is never run). A graph that is not as
recorded is made again, with a warning. Without onnxruntime, "auto" says so in one
DEBUG line (the light install lacks it by design) and runs Keras; "onnxruntime" raises.
"""

import atexit
import contextlib
import hashlib
import logging
import threading
import weakref

from kbert.optional_packages import ONNX_EXPORT_MODULES
from kbert.optional_packages import installed
from kbert.optional_packages import require_extra

logger = logging.getLogger("kbert.inference")

ENGINES = ("auto", "keras", "onnxruntime")
QUANTIZATIONS = (None, "int8")
# Measured in benchmarks/LOG.md, 2026-12-03 (on a CPU ONNX Runtime's forward pass was
# about 0.56x XLA's for one text, and as fast on batches): "auto" takes a cached graph.
AUTO_PREFERS_ONNX_RUNTIME = True
ONNX_CACHE_FOLDER = "onnx"
GRAPH_FILES = {None: "model.onnx", "int8": "model.int8.onnx"}
_CHECKSUM_CHUNK_BYTES = 1 << 24

# Per Keras model: its weights' stamp and checksum, its runners and its int8 copy.
_ENGINES = weakref.WeakKeyDictionary()
# Graphs "auto" scheduled in this process: (weights checksum, quantize) -> {"thread": a
# `threading.Timer` that makes the graph and its runner, "started": set when it begins,
# "written": set once the graph is cached or the export failed}.
_EXPORTS = {}
_EXPORTS_LOCK = threading.Lock()
_EXITING = threading.Event()
# Weights up to this many bytes export and load into ONNX Runtime in a fraction of a
# second (the demo's 22 MB: 0.08 s export, 0.18 s session, where its first Keras call
# compiles for 1.1 s; BERT-base's 438 MB: 1.0 s and 1.0 s), so "auto" makes their graph
# before it answers; larger models' graphs are made in the background.
SYNCHRONOUS_EXPORT_BYTES = 64 * 2**20
# A larger model's graph is made or loaded once "auto" has not run it for this long: a
# one-shot command has ended by then (at BERT-base, loading ONNX Runtime made a fresh
# `kbert classify` of one sentence 8.2 s where Keras took 5.2 s, and an export beside
# Keras' first calls made 64 sentences 43.5 s instead of 22.5 s: NOTES section 11).
EXPORT_DELAY_SECONDS = 2.0
_told_missing = False


def engine_model(model, engine="auto", quantize=None):
    """What runs `model`'s forward passes for `engine` and `quantize` (see the module doc).

    Args:
        model: a kbert Keras model (anything else, such as an `OnnxRuntimeModel`, is
            returned as it is).
        engine: "auto", "keras" or "onnxruntime".
        quantize: None, or "int8": int8 weights (ONNX Runtime's dynamic quantization, or
            Keras' `quantize("int8")` on a copy of the model for the Keras engine).

    Returns:
        `model`, its int8 copy, or an `OnnxRuntimeModel`.
    """
    if engine not in ENGINES:
        raise ValueError(f"`engine` must be one of {list(ENGINES)}. Received: engine={engine!r}")
    if quantize not in QUANTIZATIONS:
        raise ValueError(
            f"`quantize` must be None or 'int8'. Received: quantize={quantize!r}"
        )
    if not hasattr(model, "stateless_call"):
        return model  # not a Keras model: it runs itself
    if engine == "auto":
        runner = _auto_runner(model, quantize)
        if runner is not None:
            return runner
        engine = "keras"
    if engine == "keras":
        return model if quantize is None else _keras_int8(model)
    require_extra("onnxruntime", "The ONNX Runtime engine")
    return _onnx_runtime_model(model, quantize)


def _auto_runner(model, quantize):
    """The ONNX Runtime runner "auto" takes for `model`, or None for Keras; a graph that
    is missing is made now (small models) or begun in the background."""
    if not _auto_picks_onnx_runtime():
        return None
    entry = _entry(model)
    runner = entry["runners"].get(quantize)
    if runner is not None:
        return runner
    key = (entry["checksum"], quantize)
    if key in _EXPORTS:  # scheduled (put off again), being made, or failed here once
        _schedule_export(model, quantize, key)
        return None
    names = [GRAPH_FILES[None]] + ([GRAPH_FILES[quantize]] if quantize else [])
    if not (can_export() or all((graph_path(model).parent / name).is_file()
                                for name in names)):
        return None
    if _weights_bytes(entry) <= SYNCHRONOUS_EXPORT_BYTES:
        return _onnx_runtime_model(model, quantize, quiet=True)  # checked, or made
    # Even loading a cached graph costs a fresh process more than Keras' first call.
    _schedule_export(model, quantize, key)
    return None


def _auto_picks_onnx_runtime():
    global _told_missing
    if not AUTO_PREFERS_ONNX_RUNTIME or not on_cpu():
        return False
    if _weights_stamp([]) is None:
        # TensorFlow: only a checksum of every weight tells whether a cached graph is
        # still this model's (its variables change in place), 0.35 s a call at BERT-base.
        return False
    if not installed("onnxruntime"):
        if not _told_missing:  # DEBUG: an optional engine a light install lacks by design
            logger.debug("onnxruntime is not installed; inference runs on Keras "
                         '(pip install "kbert-keras[onnx]" for the ONNX Runtime engine).')
            _told_missing = True
        return False
    return True


def _weights_bytes(entry):
    """The bytes of the model's weights (what an export writes and a session loads)."""
    import math

    return sum(math.prod(variable.shape) * 4 for variable in entry["variables"])


def _schedule_export(model, quantize, key):
    """Makes `model`'s graph and runner in a daemon thread once "auto" has left it alone
    for `EXPORT_DELAY_SECONDS` (each call puts it off again): while the process is idle
    (the app between requests), never beside the work it would slow down; a process
    that ends sooner (a one-shot command) makes nothing."""
    with _EXPORTS_LOCK:
        export = _EXPORTS.get(key)
        if export is not None and export["started"].is_set():
            return  # being made, made, or failed
        if export is not None:
            export["thread"].cancel()  # not begun yet: put off again
        if not _EXPORTS:
            atexit.register(_finish_exports)
        export = _EXPORTS[key] = {"written": threading.Event(), "started": threading.Event()}

        def make():
            with _EXPORTS_LOCK:  # begun before the exit (which waits for it), or not at all
                if _EXITING.is_set():
                    return
                export["started"].set()
            try:
                _onnx_runtime_model(model, quantize, quiet=True, written=export["written"])
            except _Exiting:
                pass
            except Exception as error:  # "auto" stays on Keras in this process
                logger.warning("Making the ONNX Runtime engine of the model failed (%s); "
                               "inference runs on Keras.", error)
            finally:
                export["written"].set()

        export["thread"] = threading.Timer(EXPORT_DELAY_SECONDS, make)
        export["thread"].name, export["thread"].daemon = "kbert-onnx-export", True
        export["thread"].start()
    logger.debug("Making the ONNX graph of the model once idle for %s s.", EXPORT_DELAY_SECONDS)


class _Exiting(Exception):
    """The process is exiting: a graph just written gets no session."""


def _finish_exports():
    """Run at exit: drops scheduled exports, and lets a graph being written be finished
    (about 1 s at BERT-base; its session is skipped): a daemon thread stopped inside a
    native call (a JAX array read, ONNX Runtime) can abort the whole process."""
    with _EXPORTS_LOCK:
        _EXITING.set()
        exports = list(_EXPORTS.values())
        for export in exports:
            export["thread"].cancel()
    for export in exports:
        if export["started"].is_set():
            export["thread"].join()


def on_cpu():
    """Whether Keras runs on a CPU (no GPU or TPU in use)."""
    import keras

    backend = keras.config.backend()
    if backend == "jax":
        import jax

        return jax.default_backend() == "cpu"
    if backend == "torch":
        import torch

        return not torch.cuda.is_available()
    if backend == "tensorflow":
        import tensorflow as tf

        return not tf.config.list_logical_devices("GPU")
    return True


def can_export():
    """Whether this install can make ONNX graphs (`ONNX_EXPORT_MODULES` are installed)."""
    return all(installed(name) for name in ONNX_EXPORT_MODULES)


def weights_checksum(model):
    """The sha256 (hex) of `model`'s class, and every weight's path, dtype, shape and bytes."""
    import keras
    import numpy as np

    digest = hashlib.sha256(type(model).__qualname__.encode("utf-8"))
    for variable in model.weights:
        value = np.ascontiguousarray(keras.ops.convert_to_numpy(variable))
        digest.update(f"\0{variable.path}\0{value.dtype}\0{value.shape}\0".encode("utf-8"))
        view = memoryview(value).cast("B")
        for start in range(0, len(view), _CHECKSUM_CHUNK_BYTES):
            digest.update(view[start:start + _CHECKSUM_CHUNK_BYTES])
    return digest.hexdigest()


def graph_path(model, quantize=None, cache_dir=None):
    """The cache file of `model`'s ONNX graph (made or not), for `quantize`."""
    from kbert.checkpoints.named_checkpoints import cache_root

    key = _entry(model)["checksum"][:32]
    return cache_root(cache_dir) / ONNX_CACHE_FOLDER / key / GRAPH_FILES[quantize]


def _entry(model):
    """The engines of `model`, reset when its weights changed."""
    entry = _ENGINES.get(model)
    variables = entry["variables"] if entry is not None else list(model.weights)
    stamp = _weights_stamp(variables)
    if entry is not None and stamp is not None and entry["stamp"] == stamp:
        return entry
    checksum = weights_checksum(model)
    if entry is None or entry["checksum"] != checksum:
        entry = {"stamp": stamp, "checksum": checksum, "runners": {}, "int8": None,
                 "variables": list(model.weights)}
        _ENGINES[model] = entry
    entry["stamp"] = stamp
    return entry


def _weights_stamp(variables):
    """What changes when the weights change, cheaply; None where only a checksum tells.

    JAX arrays are immutable (an update replaces the variable's value); PyTorch counts
    in-place updates of a tensor in `_version`; TensorFlow variables change in place.
    `variables` is the model's list when it was first run (`model.weights` walks every
    layer, which at BERT-base cost about 1 ms a call, more than ONNX Runtime's forward
    pass of a small model); the values are read without Keras' `value` property for
    the same reason. A model whose variables are replaced (`quantize` in place) is
    not a float32 model ONNX export takes.
    """
    import keras

    backend = keras.config.backend()
    if backend == "jax":
        return tuple(id(_raw_value(variable)) for variable in variables)
    if backend == "torch":
        values = [_raw_value(variable) for variable in variables]
        return tuple((id(value), value._version) for value in values)
    return None


def _raw_value(variable):
    """A Keras variable's backend array (its `_value`, else `value`)."""
    value = getattr(variable, "_value", None)
    return variable.value if value is None else value


def _onnx_runtime_model(model, quantize, quiet=False, written=None):
    """The model's ONNX Runtime runner, its graph exported when missing or not as
    recorded (logged at DEBUG when `quiet`: "auto" made it on its own); `written`, an
    event set once the graph is in the cache, before the session is made."""
    from kbert.inference.onnx_runtime_model import OnnxRuntimeModel

    entry = _entry(model)
    runner = entry["runners"].get(quantize)
    if runner is None:
        graph = _graph_bytes(model, quantize, logging.DEBUG if quiet else logging.INFO)
        if written is not None:
            written.set()
            if _EXITING.is_set():
                raise _Exiting()
        runner = OnnxRuntimeModel(model, graph_path(model, quantize), graph_bytes=graph)
        entry["runners"][quantize] = runner
    return runner


def _graph_bytes(model, quantize, level):
    """The checked bytes of `model`'s cached graph for `quantize`, made when missing or
    not as recorded (the export logged at `level`)."""
    from kbert.inference.onnx_cache_entry import cached_graph
    from kbert.inference.onnx_graph_checks import graph_size_limit

    checksum = _entry(model)["checksum"]
    folder = graph_path(model).parent
    limit = graph_size_limit(model)

    def export_to(path):
        from kbert.inference.onnx_export import export_graph

        logger.log(level, "Exporting the model to ONNX once, into %s.", path.parent)
        export_graph(model, path)

    graph = cached_graph(folder, GRAPH_FILES[None], export_to, limit, checksum)
    if quantize is None:
        return graph
    return cached_graph(folder, GRAPH_FILES[quantize], lambda path: _quantize(graph, path),
                        limit, checksum)


def _quantize(float_graph, path):
    """Writes the int8 graph of the float32 graph `float_graph` (bytes) to `path`."""
    import onnx
    from onnxruntime.quantization import QuantType
    from onnxruntime.quantization import quantize_dynamic

    from kbert.files import atomic_path

    with atomic_path(path) as temporary, _root_records_to_debug("onnxruntime"):
        quantize_dynamic(onnx.load_from_string(float_graph), str(temporary),
                         weight_type=QuantType.QInt8)


@contextlib.contextmanager
def _root_records_to_debug(package):
    """Records `package` logs through the root logger go to kbert's log at DEBUG instead.

    onnxruntime's quantizer warns on the root logger ("Please consider to run
    pre-processing before quantization"), advice for people writing quantization
    scripts, not for someone calling `classify(..., quantize="int8")`.
    """

    class ToDebug(logging.Filter):
        def filter(self, record):
            if f"{package}" not in record.pathname:
                return True
            logger.debug("%s: %s", package, record.getMessage())
            return False

    root, quiet = logging.getLogger(), ToDebug()
    root.addFilter(quiet)
    try:
        yield
    finally:
        root.removeFilter(quiet)


def _keras_int8(model):
    """A copy of `model` with Keras' int8 weights (`model.quantize("int8")`), kept per model."""
    entry = _entry(model)
    if entry["int8"] is None:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="kbert-int8-") as folder:
            model.save_to_preset(folder, tokenizer=getattr(model, "tokenizer", None))
            copy = type(model).from_preset(folder)
        import warnings

        with warnings.catch_warnings():
            # Keras names every layer without int8 weights (LayerNormalization, Dropout).
            warnings.filterwarnings("ignore", message=r"Layer .* does not have a `quantize`")
            copy.quantize("int8")
        entry["int8"] = copy
    return entry["int8"]
