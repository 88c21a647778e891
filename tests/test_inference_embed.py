"""`embed` and `BertBackbone.with_hidden_states`: parity with transformers' hidden states.

A tiny transformers `BertModel` with random weights is saved with `save_pretrained`,
converted into a kbert preset, and `embed`'s per-layer token vectors are compared with
`BertModel(..., output_hidden_states=True)` on a padded batch of texts of different
lengths. Pooling and layer combination are then checked against NumPy computed from
transformers' states.
"""

import numpy as np
import pytest

from inference_helpers import VOCABULARY
from kbert.checkpoints import convert
from kbert.inference import TokenEmbeddings
from kbert.inference import embed
from kbert.models import BertBackbone
from kbert.models import BertMaskedLM
from kbert.tokenizer.bert_tokenizer import BertTokenizer
from test_huggingface_import import HF_CONFIG
from test_huggingface_import import make_huggingface_folder

torch = pytest.importorskip("torch")

TOLERANCE = 1e-5
NUM_LAYERS = HF_CONFIG["num_hidden_layers"]
HIDDEN_SIZE = HF_CONFIG["hidden_size"]
# Lengths 9, 4, 26, 10 and 2 tokens: two length buckets (16 and 32), padding in every
# batch of several rows, an empty text, accents, CJK and sub-word pieces.
TEXTS = [
    "The cat sat on the mat.",
    "a dog",
    "Who ran to PARIS , France ? The cat did , and the dog sat on a mat in the city of paris .",
    "北京 Café naïve unaffable !",
    "",
]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """(transformers BertModel, kbert backbone, tokenizer) with the same weights."""
    root = tmp_path_factory.mktemp("embed")
    source = root / "hf"
    hf_model = make_huggingface_folder(source, "BertModel")
    (source / "vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    preset = convert(source, root / "preset")
    return hf_model, BertBackbone.from_preset(preset), BertTokenizer.from_preset(preset)


def huggingface_hidden_states(hf_model, tokenizer, texts, pairs=None):
    """transformers' hidden states of `texts`, one padded batch: (layers + 1, B, L, H)."""
    batch = tokenizer(texts, pairs)
    with torch.no_grad():
        outputs = hf_model(
            input_ids=torch.from_numpy(batch["token_ids"]).long(),
            token_type_ids=torch.from_numpy(batch["segment_ids"]).long(),
            attention_mask=torch.from_numpy(batch["padding_mask"]).long(),
            output_hidden_states=True,
        )
    states = np.stack([state.numpy() for state in outputs.hidden_states]).astype(np.float64)
    return states, batch["padding_mask"]


def test_every_layer_equals_transformers_hidden_states_with_padding(converted):
    hf_model, backbone, tokenizer = converted
    expected, padding_mask = huggingface_hidden_states(hf_model, tokenizer, TEXTS)
    lengths = padding_mask.sum(axis=1)
    assert len(set(lengths.tolist())) == len(TEXTS)  # every row padded differently

    every_layer = tuple(range(NUM_LAYERS + 1))
    results = embed(backbone, tokenizer, TEXTS, layers=every_layer, batch_size=4)
    worst = 0.0
    for row, result in enumerate(results):
        assert isinstance(result, TokenEmbeddings) and result.text == TEXTS[row]
        assert result.vectors.shape == (lengths[row], (NUM_LAYERS + 1) * HIDDEN_SIZE)
        assert result.vectors.dtype == np.float32
        for layer in every_layer:
            actual = result.vectors[:, layer * HIDDEN_SIZE : (layer + 1) * HIDDEN_SIZE]
            reference = expected[layer, row, : lengths[row]]
            worst = max(worst, float(np.max(np.abs(actual - reference))))
    assert worst < TOLERANCE, f"max abs difference {worst:.2e} >= {TOLERANCE}"


def test_pooling_and_combining_follow_numpy_on_transformers_states(converted):
    hf_model, backbone, tokenizer = converted
    expected, padding_mask = huggingface_hidden_states(hf_model, tokenizer, TEXTS)
    real = padding_mask[None, :, :, None].astype(np.float64)  # (1, B, L, 1)
    layers = (-1, 1)  # out of order on purpose: concatenation follows `layers`
    chosen = expected[[NUM_LAYERS, 1]]  # (2, B, L, H)
    combined = {
        "concat": np.concatenate(list(chosen), axis=-1),
        "mean": chosen.mean(axis=0),
        "sum": chosen.sum(axis=0),
    }
    for combine, tokens in combined.items():
        # sentence-transformers' mean pooling: the attention mask weighs every token.
        mean = (tokens * real[0]).sum(axis=1) / padding_mask.sum(axis=1, keepdims=True)
        for pooling, reference in (("mean", mean), ("cls", tokens[:, 0])):
            actual = embed(
                backbone,
                tokenizer,
                TEXTS,
                layers=layers,
                combine=combine,
                pooling=pooling,
                batch_size=2,
            )
            assert actual.shape == reference.shape and actual.dtype == np.float32
            np.testing.assert_allclose(actual, reference, atol=TOLERANCE, rtol=0)
        per_token = embed(backbone, tokenizer, TEXTS[0], layers=layers, combine=combine)
        length = len(per_token.tokens)
        np.testing.assert_allclose(per_token.vectors, tokens[0, :length], atol=TOLERANCE, rtol=0)
    # A single string gives a single vector; an int names one layer.
    single = embed(backbone, tokenizer, TEXTS[1], layers=-1, pooling="mean")
    reference = expected[-1, 1][padding_mask[1]].mean(axis=0)
    np.testing.assert_allclose(single, reference, atol=TOLERANCE, rtol=0)


def test_default_layers_are_the_last_four_blocks_or_all_of_fewer(converted):
    hf_model, backbone, tokenizer = converted
    expected, padding_mask = huggingface_hidden_states(hf_model, tokenizer, TEXTS[:1])
    result = embed(backbone, tokenizer, TEXTS[0])
    # Fewer than four blocks: all of them, not the embeddings output.
    reference = np.concatenate(list(expected[1:, 0]), axis=-1)
    np.testing.assert_allclose(result.vectors, reference, atol=TOLERANCE, rtol=0)


def test_pairs_are_packed_and_their_offsets_index_the_pair(converted):
    hf_model, backbone, tokenizer = converted
    texts, pairs = ["Who sat?", "a dog ran"], ["The cat sat.", "north of Paris"]
    expected, padding_mask = huggingface_hidden_states(hf_model, tokenizer, texts, pairs)
    results = embed(backbone, tokenizer, texts, layers=-1, pairs=pairs)
    for row, result in enumerate(results):
        reference = expected[-1, row, : len(result.tokens)]
        np.testing.assert_allclose(result.vectors, reference, atol=TOLERANCE, rtol=0)
        assert result.pair == pairs[row]
        spans = zip(result.tokens, result.offsets, result.sequence_ids)
        for token, (start, end), sequence in spans:
            source = {0: result.text, 1: result.pair}.get(sequence)
            if source is None:
                assert token in ("[CLS]", "[SEP]") and (start, end) == (0, 0)
            else:
                assert source[start:end].lower() == token.removeprefix("##")
    assert results[0].sequence_ids == (-1, 0, 0, 0, -1, 1, 1, 1, 1, -1)


def test_offsets_index_the_original_text(converted):
    _, backbone, tokenizer = converted
    text = "  北京 Café\tnaïve UNAFFABLE!"
    result = embed(backbone, tokenizer, text, layers=0)
    assert result.tokens == (
        "[CLS]", "北", "京", "cafe", "naive", "un", "##aff", "##able", "!", "[SEP]",
    )
    assert [text[start:end] for start, end in result.offsets] == [
        "", "北", "京", "Café", "naïve", "UN", "AFF", "ABLE", "!", "",
    ]
    assert result.sequence_ids == (-1, 0, 0, 0, 0, 0, 0, 0, 0, -1)


def test_a_task_model_embeds_through_its_backbone_and_tokenizer(converted):
    _, backbone, tokenizer = converted
    model = BertMaskedLM(backbone)
    model.tokenizer = tokenizer
    through_task = embed(model, None, TEXTS, pooling="cls")
    direct = embed(backbone, tokenizer, TEXTS, pooling="cls")
    np.testing.assert_array_equal(through_task, direct)


def test_a_long_text_is_truncated_to_the_model_limit(converted):
    _, backbone, tokenizer = converted
    result = embed(backbone, tokenizer, " ".join(["cat"] * 100), layers=-1)
    assert len(result.tokens) == 64 and result.tokens[-1] == "[SEP]"
    assert result.vectors.shape == (64, HIDDEN_SIZE)


def test_no_texts_give_empty_results(converted):
    _, backbone, tokenizer = converted
    assert embed(backbone, tokenizer, []) == []
    assert embed(backbone, tokenizer, [], layers=(0, 1), pooling="mean").shape == (
        0, 2 * HIDDEN_SIZE,
    )


def test_the_hidden_states_view_is_cached_and_leaves_the_backbone_alone(converted):
    hf_model, backbone, tokenizer = converted
    view = backbone.with_hidden_states()
    assert view is backbone.with_hidden_states()
    assert set(backbone.output) == {"sequence_output", "pooled_output"}
    inputs = tokenizer(TEXTS, sequence_length=32)
    outputs = view.predict_on_batch(inputs)
    hidden_states = np.asarray(outputs["hidden_states"])
    assert hidden_states.shape == (len(TEXTS), NUM_LAYERS + 1, 32, HIDDEN_SIZE)
    plain = backbone.predict_on_batch(inputs)
    np.testing.assert_allclose(hidden_states[:, -1], plain["sequence_output"], atol=1e-6)
    np.testing.assert_allclose(outputs["pooled_output"], plain["pooled_output"], atol=1e-6)


def test_the_view_compiles_once_per_bucket(converted, monkeypatch):
    import keras

    if keras.backend.backend() == "torch":
        pytest.skip("PyTorch runs eagerly: there is no compiled program to reuse")
    _, converted_backbone, tokenizer = converted
    # A backbone of its own: the shared one has compiled programs for many shapes.
    backbone = BertBackbone.from_config_object(converted_backbone.bert_config)
    view_class = type(backbone.with_hidden_states())
    traces = []
    real_call = view_class.call

    def counting_call(self, inputs):
        traces.append(inputs["token_ids"].shape)
        return real_call(self, inputs)

    monkeypatch.setattr(view_class, "call", counting_call)
    embed(backbone, tokenizer, ["the cat sat", "a dog ran to paris"])
    compiled = len(traces)
    # Other texts and other lengths in the same bucket (16 tokens, 2 rows): no new trace.
    embed(backbone, tokenizer, ["who sat on the mat ?", "a"])
    embed(backbone, tokenizer, ["paris", "the city of paris is north"], pooling="mean")
    assert len(traces) == compiled
    # A new bucket traces again.
    embed(backbone, tokenizer, [" ".join(["cat"] * 20), "a"])
    assert len(traces) > compiled


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(layers=()), r"`layers` must name at least one layer. Received: layers=\(\)"),
        (dict(layers=(1, 1)), r"names hidden state 1 twice \(as 1 and 1\)"),
        (dict(layers=(0, -3)), r"names hidden state 0 twice \(as 0 and -3\)"),
        (dict(layers=(3,)), r"indices from -3 to 2.*Received: layers=\(3,\) \(3 is not one\)"),
        (dict(layers=-4), r"Received: layers=-4 \(-4 is not one\)"),
        (dict(layers=(0.0,)), r"\(0.0 is not one\)"),
        (dict(layers="-1"), r"`layers` must be a layer index or a sequence of them"),
        (dict(layers=True), r"Received: layers=True"),
        (dict(combine="max"), r"one of \['concat', 'mean', 'sum'\]. Received: combine='max'"),
        (dict(pooling="max"), r"one of \['none', 'cls', 'mean'\]. Received: pooling='max'"),
        (dict(batch_size=0), r"`batch_size` must be a positive integer. Received: batch_size=0"),
        (dict(pairs=["one", "two"]), r"`pairs` must match `texts`.*1 text\(s\) and 2 pair\(s\)"),
        (dict(tokenizer=None), r"BertBackbone has no tokenizer: pass `tokenizer=`"),
    ],
)
def test_bad_arguments_are_value_errors(converted, arguments, message):
    _, backbone, tokenizer = converted
    arguments = {"tokenizer": tokenizer, **arguments}
    texts = ["the cat"] if "pairs" in arguments else "the cat"
    with pytest.raises(ValueError, match=message):
        embed(backbone, arguments.pop("tokenizer"), texts, **arguments)


def test_bad_texts_are_value_errors(converted):
    _, backbone, tokenizer = converted
    with pytest.raises(ValueError, match=r"`texts` must be a string or a list of strings"):
        embed(backbone, tokenizer, ["a", 3])


def test_the_docstring_example_holds_on_the_demo():
    """`embed`'s example shows the shipped demo's shapes (it went stale once)."""
    import doctest

    from kbert.inference import embedding

    globs = {"BertBackbone": BertBackbone, "BertTokenizer": BertTokenizer, "embed": embed}
    finder = doctest.DocTestFinder()
    (test,) = [t for t in finder.find(embedding.embed, "embed", globs=globs) if t.examples]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
