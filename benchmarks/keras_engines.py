"""The Keras engines of `gpu_benchmark.py`: kbert (any backend, and the variants that
take its optimisations away one at a time) and keras-hub's BERT.

Run in a worker process whose KERAS_BACKEND is already set. Two ways of stepping:

- "fit" (kbert as shipped, and keras-hub): `model.fit` / `model.predict` over a
  `PyDataset` that repeats the batch, Keras' own compiled loop, which carries the
  model state from step to step on the device; each timed window of `window` steps
  ends when its last step has finished (fit and predict return host values).
- "on_batch" (the benchmark as it was): `train_on_batch` / `predict_on_batch`, which
  gather every variable into the call and assign them back after it, and wait for
  the device every step.

Attention, for the variants: "dispatch" is kbert's (`kbert.layers.attention_dispatch`:
cuDNN on a JAX GPU); "keras-mask" is what kbert did before it, one
`keras.ops.dot_product_attention` call with a (B, 1, 1, S) boolean mask and no
attention-probability dropout, which cuDNN refuses so that JAX runs XLA's softmax.
"""

import keras
import numpy as np
from benchmark_data import NUM_CLASSES
from device_facts import device_description, peak_memory_reader, uses_accelerator
from timing import time_repeatedly

# engine -> how it runs: precision ("auto": bf16 on an accelerator, float32 on a CPU),
# attention and stepping (see the module docstring).
VARIANTS = {
    "kbert-jax": dict(precision="auto", attention="dispatch", step="fit"),
    "kbert-jax-before": dict(precision="float32", attention="keras-mask", step="on_batch"),
    "kbert-jax+bf16": dict(precision="mixed_bfloat16", attention="keras-mask", step="on_batch"),
    "kbert-jax+bf16+cudnn": dict(precision="mixed_bfloat16", attention="dispatch", step="on_batch"),
    "kbert-torch": dict(precision="auto", attention="dispatch", step="fit"),
    "kbert-tensorflow": dict(precision="auto", attention="dispatch", step="fit"),
    "keras-hub-jax": dict(precision="auto", attention="keras-hub", step="fit"),
}


def _precision(name):
    if name == "auto":
        return "mixed_bfloat16" if uses_accelerator(keras.config.backend()) else "float32"
    return name


def _jit_compile():
    # XLA on JAX and TensorFlow, as kbert compiles its task models; Keras's torch.compile
    # path is not what kbert users get by default, so PyTorch runs eagerly.
    return keras.config.backend() in ("jax", "tensorflow")


def _use_keras_mask_attention():
    """Puts back kbert's attention as it was: Keras' op with a (B, 1, 1, S) mask."""
    from keras import ops

    from kbert.layers import bert_self_attention

    def keras_mask_attention(query, key, value, padding_mask, **_):
        return ops.dot_product_attention(query, key, value, mask=padding_mask[:, None, None, :])

    bert_self_attention.dot_product_attention = keras_mask_attention


def _kbert_model(workload, settings):
    from kbert.models import BertBackbone, BertClassifier, BertConfig, BertPretrainer
    from kbert.training.optimization import create_optimizer

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


def _arguments(workload, batch):
    """`(x, y, sample_weight)` of `workload` (y and sample_weight None for inference)."""
    inputs = {key: batch[key] for key in ("token_ids", "segment_ids", "padding_mask")}
    if workload == "pretraining":
        inputs["mask_positions"] = batch["mask_positions"]
        labels = {"mlm_logits": batch["mask_ids"], "nsp_logits": batch["next_sentence_labels"]}
        weights = {
            "mlm_logits": batch["mask_weights"],
            "nsp_logits": np.ones_like(batch["next_sentence_labels"], dtype=np.float32),
        }
        return inputs, labels, weights
    if workload == "finetune":
        return inputs, batch["labels"], None
    return inputs, None, None


class _RepeatedBatch(keras.utils.PyDataset):
    """The same batch `steps` times: what `fit` and `predict` step through."""

    def __init__(self, arguments, steps):
        super().__init__()
        self.arguments = tuple(part for part in arguments if part is not None)
        self.steps = steps

    def __len__(self):
        return self.steps

    def __getitem__(self, index):
        return self.arguments if len(self.arguments) > 1 else self.arguments[0]


def _step_function(model, workload, batch, step, window):
    """The function timed for `workload`: `window` steps (one with "on_batch")."""
    x, y, sample_weight = _arguments(workload, batch)
    training = workload in ("finetune", "pretraining")
    if step == "on_batch":
        if training:
            return lambda: model.train_on_batch(x, y, sample_weight=sample_weight)
        return lambda: model.predict_on_batch(x)
    dataset = _RepeatedBatch((x, y, sample_weight), window)
    if training:
        return lambda: model.fit(dataset, epochs=1, verbose=0)
    return lambda: model.predict(dataset, verbose=0)


def run(engine, workload, settings, batch):
    """Builds `engine`'s model, times `workload` on `batch`; returns the measurements."""
    variant = VARIANTS[engine]
    framework = keras.config.backend()
    policy = _precision(variant["precision"])
    keras.mixed_precision.set_global_policy(policy)
    keras.utils.set_random_seed(settings["seed"])
    if variant["attention"] == "keras-mask":
        _use_keras_mask_attention()
    build = _keras_hub_model if engine.startswith("keras-hub") else _kbert_model
    model = build(workload, settings)
    window = 1 if variant["step"] == "on_batch" else settings["window"]
    step = _step_function(model, workload, batch, variant["step"], window)
    read_peak_memory = peak_memory_reader(framework)
    for _ in range(settings["warmup"]):
        step()  # The first call compiles.
    counter = _CompileCounter()
    seconds = time_repeatedly(step, settings["repeats"], warmup=0)
    attention = None
    if framework == "torch":
        from attention_report import torch_attention

        attention = torch_attention(step)
    return {
        "attention": attention,
        "seconds": [value / window for value in seconds],
        "precision": policy,
        "step": f"fit/predict loop ({window} steps a window)"
        if variant["step"] == "fit"
        else "train/predict_on_batch",
        "compiled": "XLA (jit_compile=True)" if _jit_compile() else "eager",
        "peak_memory_bytes": read_peak_memory(),
        "device": device_description(framework),
        "compilations_during_timing": counter.count,
    }


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
