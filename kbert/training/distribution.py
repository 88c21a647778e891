"""Scaling training out: data parallelism and a layout map for model parallelism.

Data parallelism (`data_parallel`, for fine-tuning and pretraining) replicates the
model on every local device and splits each global batch between them; gradients are
averaged, so the run follows the same loss curve as one device with the same global
batch. A batch whose size the devices do not divide (the epoch's one smaller batch of
a `BucketedDataset`, an evaluation's last) is filled up with rows that weigh nothing
(`BucketedDataset` asks `data_parallel_replicas`): gradients and weights are those of
one device, and so is the logged training loss (Keras' running mean weighs a batch by
its rows; `StepCallback` takes the fillers' share back out). On JAX it goes
through `keras.distribution.DataParallel` (the same code path on one device); on
TensorFlow through a `tf.distribute.TPUStrategy` when there is a TPU (`TPU_NAME`, or
a TPU VM's own chips: `tpu_address`), else a `MirroredStrategy` scope over the local
GPUs, or over the logical CPU devices a script split the CPU into (one device: the
default strategy computes the same); on PyTorch
kbert warns and trains on a single device (Keras has no distribution support for torch).

Model parallelism for the large sizes (JAX only): `layout_map_for` shards the
attention's fused query/key/value kernel and the feed-forward kernels along a
"model" mesh axis (Megatron's column/row split) and the token embedding along the
vocabulary:

>>> mesh = keras.distribution.DeviceMesh((2, 4), ["batch", "model"],
...                                      keras.distribution.list_devices())
>>> distribution = keras.distribution.ModelParallel(
...     layout_map=layout_map_for(config, mesh), batch_dim_name="batch")
>>> keras.distribution.set_distribution(distribution)  # before building the model

Multi-process (JAX; several hosts, or several processes on one): every process runs
the same command, `kbert pretrain --distributed --data-parallel ...` (or sets
`KBERT_JAX_DISTRIBUTED=1`), which calls `initialize_distributed` before anything
else touches JAX. That is `keras.distribution.initialize()`, i.e.
`jax.distributed.initialize()` with the coordinator address, process count and
process id from `KERAS_DISTRIBUTION_JOB_ADDRESSES` (the coordinator's host:port),
`KERAS_DISTRIBUTION_NUM_PROCESSES` and `KERAS_DISTRIBUTION_PROCESS_ID`, or, where
those are unset, from `JAX_COORDINATOR_ADDRESS` and the cluster's own environment
(SLURM, Open MPI, Cloud TPU, ...). `keras.distribution.list_devices()` then lists the
devices of every process, and each process feeds its share of every global batch
(`process_share`): rows `[i * B / P, (i + 1) * B / P)` for process `i` of `P`, as
Keras shards a `tf.data` pipeline. CPUs talk through JAX's CPU collectives (gloo).
`tests/test_distributed_pretraining.py` runs two such processes on one machine and
checks every step against one process with the same number of devices.
"""

import contextlib
import logging
import os

import keras

from kbert.preprocessing.data_parallel_rows import process_share  # noqa: F401 (re-exported)

logger = logging.getLogger("kbert.training")

MULTI_HOST_VARIABLE = "KBERT_JAX_DISTRIBUTED"
TPU_VARIABLE = "TPU_NAME"


def initialize_distributed(enabled=None):
    """Joins the other processes of a JAX multi-process run (`keras.distribution.initialize`).

    Args:
        enabled: True to initialise, False not to; None to initialise only when
            `KBERT_JAX_DISTRIBUTED=1` is set.

    Returns:
        Whether it did.
    """
    if enabled is None:
        enabled = os.environ.get(MULTI_HOST_VARIABLE) == "1"
    if not enabled:
        return False
    if keras.backend.backend() != "jax":
        raise ValueError(
            "Multi-process training (--distributed, "
            f"{MULTI_HOST_VARIABLE}=1) needs the JAX backend. "
            f"Received: KERAS_BACKEND={keras.backend.backend()}"
        )
    import jax

    keras.distribution.initialize()
    logger.info(
        "JAX distributed: process %d of %d, %d devices in all.",
        jax.process_index(),
        jax.process_count(),
        jax.device_count(),
    )
    return True


def writes_outputs():
    """Whether this process writes the run's files: the first of a multi-process run
    (every process holds the same replicated model), the only one otherwise."""
    if keras.backend.backend() != "jax":
        return True
    import jax

    return jax.process_index() == 0


def local_device_count():
    """The devices `data_parallel` would split each batch over in this process: JAX's
    local devices; on TensorFlow the TPU cores, else the GPUs, else the logical CPU
    devices where there are two or more; 1 on PyTorch (no Keras distribution support)."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        return jax.local_device_count()
    if backend == "tensorflow":
        import tensorflow as tf

        for kind in ("TPU", "GPU", "CPU"):
            count = len(tf.config.list_logical_devices(kind))
            if count >= 2:
                return count
    return 1


@contextlib.contextmanager
def data_parallel(enabled=True):
    """Build, compile and train the model inside this block to use every local device.

    Args:
        enabled: False for a plain single-device block (same code path for callers).

    Yields:
        The number of replicas: every global batch size must be a multiple of it.
    """
    backend = keras.backend.backend()
    if not enabled:
        yield 1
    elif backend == "jax":
        devices = keras.distribution.list_devices()
        previous = keras.distribution.distribution()
        # kbert's PyDataset feeds each process its share itself (`process_share`).
        keras.distribution.set_distribution(
            keras.distribution.DataParallel(devices=devices, auto_shard_dataset=False)
        )
        import jax

        logger.info(
            "Data parallel over %d device(s) in %d process(es): %s",
            len(devices),
            jax.process_count(),
            ", ".join(devices),
        )
        try:
            yield len(devices)
        finally:
            keras.distribution.set_distribution(previous)
    elif backend == "tensorflow":
        import tensorflow as tf

        tpu = tpu_address()
        if tpu is not None:
            strategy = tpu_strategy(tpu)
        elif len(tf.config.list_logical_devices("GPU")) >= 2:
            strategy = _mirrored_strategy(None)
        elif len(tf.config.list_logical_devices("CPU")) >= 2:
            # The CPU split into logical devices on purpose (tf.config.
            # set_logical_device_configuration): mirror over them, as over GPUs.
            strategy = _mirrored_strategy(
                tuple(device.name for device in tf.config.list_logical_devices("CPU"))
            )
        else:
            # One device: TensorFlow's default strategy is the same computation.
            logger.info(
                "Data parallel: one TensorFlow device, no MirroredStrategy needed."
            )
            yield 1
            return
        logger.info(
            "Data parallel over %d replica(s) (%s).",
            strategy.num_replicas_in_sync,
            type(strategy).__name__,
        )
        with strategy.scope():
            yield strategy.num_replicas_in_sync
    else:
        logger.warning(
            "Keras has no distribution support for %s: --data-parallel trains on one "
            "device (use the JAX or TensorFlow backend to use several).",
            backend,
        )
        yield 1


# One MirroredStrategy per device set and process: a second one numbers its collectives
# afresh, and TensorFlow then matches them with the first one's (a second run in the
# same process stopped with "Shape mismatch in the collective instance").
_MIRRORED_STRATEGIES = {}


def _mirrored_strategy(devices):
    """The process's `tf.distribute.MirroredStrategy` over `devices` (None: the GPUs)."""
    import tensorflow as tf

    if devices not in _MIRRORED_STRATEGIES:
        _MIRRORED_STRATEGIES[devices] = tf.distribute.MirroredStrategy(
            None if devices is None else list(devices)
        )
    return _MIRRORED_STRATEGIES[devices]


def tpu_address():
    """The TPU to train on: `TPU_NAME` (a name or grpc:// address, as Cloud TPU tools
    set it), "local" on a TPU VM (its chips are /dev/accel*), or None without a TPU."""
    name = os.environ.get(TPU_VARIABLE)
    if name:
        return name
    return "local" if os.path.exists("/dev/accel0") else None


def tpu_strategy(tpu):
    """A `tf.distribute.TPUStrategy` on the TPU `tpu`, connected and initialised.

    Raises:
        ValueError: naming the TPU and the resolver's error when it cannot connect.
    """
    import tensorflow as tf

    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
        if tpu != "local":
            tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
    except Exception as error:  # The resolver raises ValueError, URLError, OpErrors...
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(
            f"Cannot connect to the TPU {tpu!r} (TPUClusterResolver): {message}. Set "
            f"{TPU_VARIABLE} to the TPU's name or grpc:// address, or unset it to train "
            "without a TPU."
        ) from None
    logger.info("TPU %r: %d cores.", tpu, len(tf.config.list_logical_devices("TPU")))
    return tf.distribute.TPUStrategy(resolver)


def layout_map_for(backbone_config, mesh):
    """A `keras.distribution.LayoutMap` sharding a BERT model along `mesh`'s "model" axis.

    Column-parallel: the fused query/key/value kernel (H, 3H) and the intermediate
    kernel (H, I) are split along their outputs; row-parallel: the attention output
    projection and the feed-forward output kernel along their inputs, so that each
    device holds 1/n of every transformer layer. The token embedding (V, H), shared
    with the masked-LM head, is split along the vocabulary when that divides evenly
    (JAX needs even shards; 30522 does not divide by 4). Everything else (layer
    norms, positions, the heads' small kernels) is replicated. The "batch" axis
    splits the data.

    Args:
        backbone_config: the model's `BertConfig`.
        mesh: a `keras.distribution.DeviceMesh` with axes "batch" and "model".

    Returns:
        A `LayoutMap` for `keras.distribution.ModelParallel(layout_map=...,
        batch_dim_name="batch")`.
    """
    if tuple(mesh.axis_names) != ("batch", "model"):
        raise ValueError(
            f"`mesh` must have the axes ('batch', 'model'). Received: {tuple(mesh.axis_names)}"
        )
    shards = mesh.shape[1]
    for name in ("hidden_size", "intermediate_size", "num_heads"):
        value = getattr(backbone_config, name)
        if value % shards:
            raise ValueError(
                f"`{name}`={value} is not divisible by the {shards} devices of the model axis."
            )
    layout_map = keras.distribution.LayoutMap(mesh)
    if backbone_config.vocabulary_size % shards == 0:
        layout_map[".*token_embedding/embeddings"] = ("model", None)
    layout_map[".*query_key_value/kernel"] = (None, "model")
    layout_map[".*query_key_value/bias"] = ("model",)
    layout_map[".*output_projection/kernel"] = ("model", None)
    layout_map[".*intermediate_dense/kernel"] = (None, "model")
    layout_map[".*intermediate_dense/bias"] = ("model",)
    layout_map[".*output_dense/kernel"] = ("model", None)
    return layout_map
