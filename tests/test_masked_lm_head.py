"""MaskedLMHead: BERT's masked-LM head at the masked positions, and how it compiles."""

import keras
import numpy as np
import pytest
from scipy.special import erf

from kbert.models import BertBackbone
from kbert.models import BertMaskedLM
from kbert.models import BertPretrainer

TINY = dict(
    vocabulary_size=1000, num_layers=1, num_heads=2, hidden_size=32, intermediate_size=64,
    max_sequence_length=16,
)


def _layer_norm(x, gamma, beta, epsilon):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def _inputs(batch=2, length=8, slots=3, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "token_ids": rng.integers(5, TINY["vocabulary_size"], (batch, length)).astype("int32"),
        "segment_ids": np.zeros((batch, length), "int32"),
        "padding_mask": np.ones((batch, length), "int32"),
        "mask_positions": rng.integers(0, length, (batch, slots)).astype("int32"),
    }


def test_logits_are_the_tied_embedding_scores_at_the_masked_positions():
    model = BertMaskedLM(BertBackbone(**TINY))
    inputs = _inputs()
    logits = keras.ops.convert_to_numpy(model.predict_on_batch(inputs))
    sequence = keras.ops.convert_to_numpy(
        model.backbone({key: value for key, value in inputs.items() if key != "mask_positions"})[
            "sequence_output"
        ]
    )
    head = model.get_layer("masked_lm_head")
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in head.transform_dense.weights)
    gamma, beta = (keras.ops.convert_to_numpy(w) for w in head.layer_norm.weights)
    table = keras.ops.convert_to_numpy(model.backbone.token_embedding.embeddings)
    output_bias = keras.ops.convert_to_numpy(head.output_bias)
    gathered = np.take_along_axis(sequence, inputs["mask_positions"][..., None], axis=1)
    hidden = gathered @ kernel + bias
    hidden = 0.5 * hidden * (1 + erf(hidden / np.sqrt(2)))  # exact GELU
    hidden = _layer_norm(hidden, gamma, beta, head.layer_norm_epsilon)
    expected = hidden @ table.T + output_bias
    assert logits.shape == (2, 3, TINY["vocabulary_size"])
    np.testing.assert_allclose(logits, expected, atol=2e-5, rtol=1e-5)


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="inspects XLA's compiled program")
def test_the_compiled_head_does_not_copy_the_transposed_embedding_table():
    # x @ E^T compiled (XLA:CPU) into a transposed copy of the whole (V, H) table on
    # every call: 94 MB and ~55 ms of an 85 ms fill-mask at BERT-base.
    import jax

    model = BertMaskedLM(BertBackbone(**TINY))
    inputs = _inputs(batch=1, slots=1)
    model.predict_on_batch(inputs)
    trainable = [variable.value for variable in model.trainable_variables]
    non_trainable = [variable.value for variable in model.non_trainable_variables]

    def forward(trainable, non_trainable, inputs):
        return model.stateless_call(trainable, non_trainable, inputs)[0]

    compiled = jax.jit(forward).lower(trainable, non_trainable, inputs).compile().as_text()
    vocabulary, hidden = TINY["vocabulary_size"], TINY["hidden_size"]
    transposed_table = f"f32[{hidden},{vocabulary}]"
    offending = [line.strip() for line in compiled.splitlines() if transposed_table in line]
    assert offending == [], "\n".join(offending)


@pytest.mark.parametrize("task_class", [BertMaskedLM, BertPretrainer])
@pytest.mark.parametrize("form", ["keras_file", "preset"])
def test_a_loaded_task_keeps_its_head_tied_to_the_token_embedding(task_class, form, tmp_path):
    # The head's config carries an embedding of its own (a head alone rebuilds from
    # it); a task rebuilds its head from the backbone instead, so the tie survives.
    model = task_class(BertBackbone(**TINY))
    inputs = _inputs()
    expected = keras.tree.map_structure(np.asarray, model.predict_on_batch(inputs))
    if form == "keras_file":
        model.save(tmp_path / "model.keras")
        loaded = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    else:
        model.save_to_preset(tmp_path / "preset")
        loaded = task_class.from_preset(tmp_path / "preset")
    embedding = loaded.backbone.token_embedding
    assert loaded.get_layer("masked_lm_head").token_embedding is embedding
    assert sum(variable is embedding.embeddings for variable in loaded.trainable_weights) == 1
    actual = keras.tree.map_structure(np.asarray, loaded.predict_on_batch(inputs))
    keras.tree.map_structure(
        lambda value, reference: np.testing.assert_allclose(value, reference, atol=1e-5),
        actual,
        expected,
    )
