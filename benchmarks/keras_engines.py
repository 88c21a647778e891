"""The Keras engines of `gpu_benchmark.py`: kbert (any backend) and keras-hub's BERT.

Run in a worker process whose KERAS_BACKEND is already set. Training steps are
`model.train_on_batch` (Keras' compiled train step: forward, loss, gradients and the
AdamW update in one program on JAX and TensorFlow) and inference is
`model.predict_on_batch`; both return NumPy values, so each timed call includes the
wait for the device.
"""

import keras
import numpy as np
from benchmark_data import NUM_CLASSES
from device_facts import device_description, peak_memory_reader, uses_accelerator
from timing import time_repeatedly


def _precision():
    """bf16 mixed precision on an accelerator; float32 on a CPU (the smoke run)."""
    return "mixed_bfloat16" if uses_accelerator(keras.config.backend()) else "float32"


def _jit_compile():
    # XLA on JAX and TensorFlow, as kbert compiles its task models; Keras's torch.compile
    # path is not what kbert users get by default, so PyTorch runs eagerly.
    return keras.config.backend() in ("jax", "tensorflow")


def _kbert_model(workload, settings):
    from kbert.models import BertBackbone, BertClassifier, BertConfig, BertPretrainer
    from kbert.tasks.optimization import create_optimizer

    config = BertConfig(
        vocabulary_size=settings["vocabulary_size"],
        hidden_size=settings["hidden_size"],
        num_layers=settings["num_layers"],
        num_heads=settings["num_heads"],
        intermediate_size=settings["intermediate_size"],
    )
    backbone = BertBackbone.from_config_object(config)
    if workload == "pretraining":
        model = BertPretrainer(backbone)
    else:
        model = BertClassifier(backbone, num_classes=NUM_CLASSES)
    # kbert's fine-tuning optimiser (AdamW, warm-up and decay, clipping at 1.0) and
    # losses; no metrics, as the reference computes none.
    optimizer = create_optimizer(total_steps=10_000, learning_rate=5e-5)
    model.compile(optimizer=optimizer, metrics=[], jit_compile=_jit_compile())
    return model


def _keras_hub_model(workload, settings):
    import keras_hub

    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=settings["vocabulary_size"],
        num_layers=settings["num_layers"],
        num_heads=settings["num_heads"],
        hidden_dim=settings["hidden_size"],
        intermediate_dim=settings["intermediate_size"],
        max_sequence_length=512,
    )
    optimizer = keras.optimizers.AdamW(
        learning_rate=5e-5, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0
    )
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    if workload != "pretraining":
        model = keras_hub.models.BertTextClassifier(
            backbone, num_classes=NUM_CLASSES, preprocessor=None
        )
        model.compile(optimizer=optimizer, loss=loss, metrics=[], jit_compile=_jit_compile())
        return model
    # keras-hub has no next-sentence model: its masked-LM head (run at the masked
    # positions only, like kbert's) and a Dense next-sentence layer on the pooled output.
    inputs = dict(backbone.input)
    inputs["mask_positions"] = keras.Input(shape=(None,), dtype="int32", name="mask_positions")
    encoded = backbone({key: inputs[key] for key in backbone.input})
    masked_lm_head = keras_hub.layers.MaskedLMHead(
        vocabulary_size=settings["vocabulary_size"],
        token_embedding=backbone.token_embedding,
        intermediate_activation="gelu",
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
        dtype=backbone.dtype_policy,
        name="mlm_head",
    )
    outputs = {
        "mlm_logits": masked_lm_head(encoded["sequence_output"], inputs["mask_positions"]),
        "nsp_logits": keras.layers.Dense(2, dtype="float32", name="nsp_head")(
            encoded["pooled_output"]
        ),
    }
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=optimizer,
        loss={"mlm_logits": loss, "nsp_logits": loss},
        metrics=[],
        jit_compile=_jit_compile(),
    )
    return model


def _step(model, workload, batch):
    """The function timed for `workload`: one training step or one forward pass."""
    inputs = {key: batch[key] for key in ("token_ids", "segment_ids", "padding_mask")}
    if workload == "pretraining":
        inputs["mask_positions"] = batch["mask_positions"]
        labels = {"mlm_logits": batch["mask_ids"], "nsp_logits": batch["next_sentence_labels"]}
        weights = {
            "mlm_logits": batch["mask_weights"],
            "nsp_logits": np.ones_like(batch["next_sentence_labels"], dtype=np.float32),
        }
        return lambda: model.train_on_batch(inputs, labels, sample_weight=weights)
    if workload == "finetune":
        return lambda: model.train_on_batch(inputs, batch["labels"])
    return lambda: model.predict_on_batch(inputs)


class _CompileCounter:
    """Counts XLA compilations on JAX, to show that the timed steps reuse one program.

    `count` stays None on the other backends, which do not report compilations.
    """

    def __init__(self):
        self.count = None
        if keras.config.backend() == "jax":
            import jax

            self.count = 0
            jax.monitoring.register_event_duration_secs_listener(self._on_event)

    def _on_event(self, event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            self.count += 1


def run(engine, workload, settings, batch):
    """Builds `engine`'s model, times `workload` on `batch`; returns the measurements."""
    framework = keras.config.backend()
    policy = _precision()
    keras.mixed_precision.set_global_policy(policy)
    keras.utils.set_random_seed(settings["seed"])
    build = _keras_hub_model if engine.startswith("keras-hub") else _kbert_model
    model = build(workload, settings)
    step = _step(model, workload, batch)
    read_peak_memory = peak_memory_reader(framework)
    for _ in range(settings["warmup"]):
        step()  # The first call compiles.
    counter = _CompileCounter()
    seconds = time_repeatedly(step, settings["repeats"], warmup=0)
    return {
        "seconds": seconds,
        "precision": policy,
        "compiled": "XLA (jit_compile=True)" if _jit_compile() else "eager",
        "peak_memory_bytes": read_peak_memory(),
        "device": device_description(framework),
        "compilations_during_timing": counter.count,
    }
