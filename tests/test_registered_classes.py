"""Every class kbert registers with Keras goes through the shared harness (layer_harness.py).

One case per name of `kbert.keras_registry.KERAS_CLASSES`; a class registered without a
case here fails `test_every_registered_class_has_a_case`.
"""

import keras
import numpy as np
import pytest
from layer_harness import run_layer_test
from layer_harness import run_object_test
from model_helpers import TINY
from model_helpers import make_inputs

from kbert.keras_registry import KERAS_CLASSES
from kbert.layers import BertEmbeddings
from kbert.layers import BertEncoderBlock
from kbert.layers import BertPooler
from kbert.layers import BertSelfAttention
from kbert.layers import MaskedLMHead
from kbert.layers.host_truncated_normal import HostTruncatedNormal
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertMultipleChoice
from kbert.models import BertPretrainer
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier
from kbert.pretraining.dynamic_masking import DynamicMasking
from kbert.training.bert_adamw import BertAdamW
from kbert.training.ignore_class_accuracy import IgnoreClassAccuracy
from kbert.training.optimization import LinearWarmupDecay
from kbert.training.token_cross_entropy import TokenCrossEntropy

# Smaller than the other model tests' TINY: each case builds its model six times.
SMALL = dict(
    TINY, vocabulary_size=23, hidden_size=8, num_layers=1, num_heads=2, intermediate_size=12,
    max_positions=8,
)
BATCH, LENGTH, HIDDEN, NUM_MASKS = 4, 5, 8, 2
RNG = np.random.default_rng(0)


def _floats(*shape):
    return RNG.normal(size=shape).astype("float32")


def _padding_mask():
    mask = np.ones((BATCH, LENGTH), dtype=bool)
    mask[1, 3:] = False
    return mask


def _model_inputs(num_masks=0):
    return make_inputs(
        batch_size=BATCH, sequence_length=LENGTH, vocabulary_size=SMALL["vocabulary_size"],
        num_masks=num_masks,
    )


def _labels(high, *shape):
    return RNG.integers(0, high, shape).astype("int32")


def _task(**task_kwargs):
    """A task's constructor arguments, as a function of the policy of its SMALL backbone."""
    return lambda dtype: dict(backbone=BertBackbone(**SMALL, dtype=dtype), **task_kwargs)


def _token_embedding(dtype):
    return keras.layers.Embedding(
        13, HIDDEN, embeddings_initializer=HostTruncatedNormal(0.05), dtype=dtype,
        name="token_embedding",
    )


def _choice_inputs():
    """(B, C, L) inputs: BATCH // 2 examples of 2 choices, BATCH rows as the other
    models' (JAX compiles each eager operation once per shape)."""
    return {
        name: value.reshape(BATCH // 2, 2, LENGTH) for name, value in _model_inputs().items()
    }


def _token_labels(inputs):
    labels = _labels(3, BATCH, LENGTH)
    return np.where(inputs["padding_mask"] == 1, labels, -100).astype("int32")


def _layer_cases():
    return {
        "BertEmbeddings": dict(
            init_kwargs=dict(
                vocabulary_size=11, hidden_size=HIDDEN, max_positions=7, type_vocabulary_size=3,
                dropout=0.0, layer_norm_epsilon=1e-6, initializer_range=0.05,
            ),
            input_data=dict(
                token_ids=_labels(11, BATCH, LENGTH), segment_ids=_labels(3, BATCH, LENGTH)
            ),
        ),
        "BertSelfAttention": dict(
            # The one case with dropout in its fit step: each dropout mask is a random
            # draw that XLA takes about a second to compile on a CPU.
            init_kwargs=dict(
                hidden_size=HIDDEN, num_heads=2, attention_dropout=0.1, initializer_range=0.05
            ),
            input_data=dict(x=_floats(BATCH, LENGTH, HIDDEN), padding_mask=_padding_mask()),
        ),
        "BertEncoderBlock": dict(
            init_kwargs=dict(
                hidden_size=HIDDEN, num_heads=2, intermediate_size=12, hidden_dropout=0.0,
                attention_dropout=0.0, layer_norm_epsilon=1e-6, activation="gelu_approximate",
                initializer_range=0.05,
            ),
            input_data=dict(x=_floats(BATCH, LENGTH, HIDDEN), padding_mask=_padding_mask()),
        ),
        "BertPooler": dict(
            init_kwargs=dict(hidden_size=HIDDEN, initializer_range=0.05),
            input_data=dict(sequence_output=_floats(BATCH, LENGTH, HIDDEN)),
        ),
        "MaskedLMHead": dict(
            # An unbuilt embedding: the head alone builds it (a task's head shares the
            # backbone's, built already).
            init_kwargs=lambda dtype: dict(
                token_embedding=_token_embedding(dtype), activation="gelu_approximate",
                layer_norm_epsilon=1e-5, initializer_range=0.05, dtype=dtype,
            ),
            input_data=dict(
                sequence_output=_floats(BATCH, LENGTH, HIDDEN),
                mask_positions=_labels(LENGTH, BATCH, NUM_MASKS),
            ),
            float_output_dtype="float32",
        ),
        "DynamicMasking": dict(
            init_kwargs=dict(
                vocabulary_size=17, mask_token_id=4, special_token_ids=[0, 1, 2, 3, 4],
                masked_lm_prob=0.3, max_predictions_per_seq=3, seed=7,
            ),
            input_data=dict(token_ids=(5 + _labels(12, BATCH, 6)).astype("int32")),
            float_output_dtype="float32",
        ),
    }


def _model_cases():
    masked_inputs = _model_inputs(NUM_MASKS)
    plain_inputs = _model_inputs()
    return {
        "BertBackbone": dict(init_kwargs=SMALL, input_data=plain_inputs),
        "BertClassifier": dict(
            init_kwargs=_task(label_names=["a", "b", "c"], dropout=0.0),
            input_data=plain_inputs,
            fit_targets=_labels(3, BATCH),
            float_output_dtype="float32",
        ),
        "BertMaskedLM": dict(
            init_kwargs=_task(head_activation="gelu_approximate", head_layer_norm_epsilon=1e-5),
            input_data=masked_inputs,
            fit_targets=_labels(SMALL["vocabulary_size"], BATCH, NUM_MASKS),
            untrained=("pooler",),
            float_output_dtype="float32",
        ),
        "BertMultipleChoice": dict(
            init_kwargs=_task(dropout=0.0),
            input_data=_choice_inputs(),
            fit_targets=_labels(2, BATCH // 2),
            # The softmax over an example's choices does not see a bias they all share.
            untrained=("choice_head/bias",),
            float_output_dtype="float32",
        ),
        "BertPretrainer": dict(
            init_kwargs=_task(head_activation="relu"),
            input_data=masked_inputs,
            fit_targets={
                "mlm_logits": _labels(SMALL["vocabulary_size"], BATCH, NUM_MASKS),
                "nsp_logits": _labels(2, BATCH),
            },
            float_output_dtype="float32",
        ),
        "BertQuestionAnswerer": dict(
            init_kwargs=_task(),
            input_data=plain_inputs,
            fit_targets={"start_logits": _labels(3, BATCH), "end_logits": _labels(3, BATCH) + 2},
            # The softmax over positions does not see the bias every position shares.
            untrained=("pooler", "span_head/bias"),
            float_output_dtype="float32",
        ),
        "BertTokenClassifier": dict(
            init_kwargs=_task(num_classes=3),
            input_data=plain_inputs,
            fit_targets=_token_labels(plain_inputs),
            untrained=("pooler",),
            float_output_dtype="float32",
        ),
    }


LAYER_CASES = {**_layer_cases(), **_model_cases()}
LAYER_CLASSES = {
    cls.__name__: cls
    for cls in (
        BertEmbeddings, BertSelfAttention, BertEncoderBlock, BertPooler, MaskedLMHead,
        DynamicMasking, BertBackbone, BertClassifier, BertMaskedLM, BertMultipleChoice,
        BertPretrainer, BertQuestionAnswerer, BertTokenClassifier,
    )
}


def _optimizer_step(optimizer):
    """One update of a kernel and a bias (no weight decay on biases) from one gradient."""
    kernel = keras.Variable(np.full((2, 3), 0.5, "float32"), name="kernel")
    bias = keras.Variable(np.full((3,), 0.5, "float32"), name="bias")
    gradient = np.array([0.1, -0.2, 0.3], "float32")
    optimizer.apply([np.tile(gradient, (2, 1)), gradient], [kernel, bias])
    return [keras.ops.convert_to_numpy(kernel), keras.ops.convert_to_numpy(bias)]


def _metric_result(metric):
    metric.update_state([[1, 0, 2]], [[[0.1, 0.9, 0.0], [0.2, 0.8, 0.0], [0.0, 0.0, 1.0]]])
    return keras.ops.convert_to_numpy(metric.result())


def _loss_values(loss):
    y_true = np.array([[1, 0, 2]])
    y_pred = np.array([[[0.1, 0.9, 0.0], [0.2, 0.8, 0.0], [0.0, 0.0, 1.0]]], "float32")
    weights = np.array([[1.0, 2.0, 0.5]], "float32")
    return [
        keras.ops.convert_to_numpy(loss(y_true, y_pred)),
        keras.ops.convert_to_numpy(loss(y_true, y_pred, sample_weight=weights)),
    ]


OBJECT_CASES = {
    "BertAdamW": lambda: (
        BertAdamW(
            learning_rate=LinearWarmupDecay(1e-2, warmup_steps=0, total_steps=10),
            weight_decay=0.1, epsilon_style="torch", no_decay_patterns=[r"(?:^|/)bias$"],
        ),
        _optimizer_step,
    ),
    "LinearWarmupDecay": lambda: (
        LinearWarmupDecay(1e-3, warmup_steps=4, total_steps=20, gradient_accumulation_steps=2),
        lambda schedule: [keras.ops.convert_to_numpy(schedule(step)) for step in (0, 3, 8, 30)],
    ),
    "TokenCrossEntropy": lambda: (TokenCrossEntropy(ignore_class=0), _loss_values),
    "IgnoreClassAccuracy": lambda: (IgnoreClassAccuracy(ignore_class=0), _metric_result),
    "HostTruncatedNormal": lambda: (
        HostTruncatedNormal(stddev=0.3, seed=5),
        lambda initializer: keras.ops.convert_to_numpy(initializer((4, 3))),
    ),
}


def test_every_registered_class_has_a_case():
    assert set(LAYER_CASES) | set(OBJECT_CASES) == set(KERAS_CLASSES)
    assert set(LAYER_CASES) == set(LAYER_CLASSES)
    assert not set(LAYER_CASES) & set(OBJECT_CASES)


@pytest.mark.parametrize("name", sorted(LAYER_CASES))
def test_layer(name, tmp_path):
    run_layer_test(LAYER_CLASSES[name], folder=tmp_path, **LAYER_CASES[name])


@pytest.mark.parametrize("name", sorted(OBJECT_CASES))
def test_object(name):
    obj, behaviour = OBJECT_CASES[name]()
    run_object_test(obj, behaviour)
