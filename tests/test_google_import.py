"""Original google-research/bert checkpoints: kbert must reproduce the same model.

The checkpoint is written the way the original code wrote it: TF1 variables under
Google's names (`bert/encoder/layer_0/attention/self/query/kernel`, ...), saved with
`tf.compat.v1.train.Saver`, with Adam slots and `global_step` beside them. Its values
come from a random transformers model, so the expected outputs are transformers' own.
"""

import json
import logging
import shutil

import keras
import numpy as np
import pytest

from kbert.checkpoints import convert
from kbert.cli import main
from kbert.models import BertClassifier
from kbert.models import BertPretrainer
from kbert.models import BertQuestionAnswerer
from kbert.models.preset_loading import load_checkpoint

tf = pytest.importorskip("tensorflow")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TOLERANCE = 1e-4
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"word{i}" for i in range(58)]
GOOGLE_CONFIG = {
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 32,
    "initializer_range": 0.02,
    "intermediate_size": 37,
    "max_position_embeddings": 40,
    "num_attention_heads": 4,
    "num_hidden_layers": 2,
    "type_vocab_size": 2,
    "vocab_size": len(VOCABULARY),
}
LENGTHS = (11, 6)
MASK_POSITIONS = np.array([[1, 5, 9], [0, 2, 4]], dtype="int32")


def random_transformers_model(architecture, **config):
    torch.manual_seed(3)
    hf_config = transformers.BertConfig(
        vocab_size=GOOGLE_CONFIG["vocab_size"],
        hidden_size=GOOGLE_CONFIG["hidden_size"],
        num_hidden_layers=GOOGLE_CONFIG["num_hidden_layers"],
        num_attention_heads=GOOGLE_CONFIG["num_attention_heads"],
        intermediate_size=GOOGLE_CONFIG["intermediate_size"],
        max_position_embeddings=GOOGLE_CONFIG["max_position_embeddings"],
        **config,
    )
    model = getattr(transformers, architecture)(hf_config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn_like(parameter) * 0.2
            parameter.copy_(noise + 1.0 if name.endswith("LayerNorm.weight") else noise)
    return model


def google_variables(model):
    """transformers weights under the names google-research/bert's modeling.py gives them."""
    variables = {}
    for name, tensor in model.state_dict().items():
        value = tensor.detach().numpy().astype("float32")
        if name.startswith("cls.predictions.decoder") or name.endswith("position_ids"):
            continue  # Tied to the word embeddings / a buffer: not in Google checkpoints.
        if name in ("cls.predictions.bias",):
            variables["cls/predictions/output_bias"] = value
            continue
        # Heads written as output_weights (out, in), as in run_pretraining/run_squad/
        # run_classifier.
        heads = {
            "cls.seq_relationship": "cls/seq_relationship/",
            "qa_outputs": "cls/squad/",
            "classifier": "",
        }
        head = name.rsplit(".", 1)[0]
        if head in heads:
            suffix = "output_weights" if name.endswith("weight") else "output_bias"
            variables[heads[head] + suffix] = value
            continue
        google = name.replace("bert.", "bert/", 1) if name.startswith("bert.") else name
        google = google.replace("encoder.layer.", "encoder/layer_").replace(".", "/")
        if "LayerNorm" in google:
            google = google.replace("LayerNorm/weight", "LayerNorm/gamma").replace(
                "LayerNorm/bias", "LayerNorm/beta"
            )
        elif google.endswith("embeddings/weight"):
            google = google[: -len("/weight")]
        elif google.endswith("/weight"):
            google, value = google[: -len("/weight")] + "/kernel", value.T  # (in, out)
        variables[google] = np.ascontiguousarray(value)
    return variables


def write_google_checkpoint(folder, variables, optimizer_state=True):
    """Saves `variables` the way the original TF1 code did, plus Adam slots and global_step."""
    folder.mkdir(parents=True, exist_ok=True)
    with tf.Graph().as_default():
        saved = []
        for name, value in variables.items():
            saved.append(tf.compat.v1.Variable(value, name=name))
            if optimizer_state:
                saved.append(tf.compat.v1.Variable(np.full_like(value, 9.0), name=f"{name}/adam_m"))
                saved.append(tf.compat.v1.Variable(np.full_like(value, 7.0), name=f"{name}/adam_v"))
        if optimizer_state:
            saved.append(tf.compat.v1.Variable(np.int64(100000), name="global_step"))
        saver = tf.compat.v1.train.Saver(saved)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, str(folder / "bert_model.ckpt"), write_meta_graph=False)
    (folder / "bert_config.json").write_text(json.dumps(GOOGLE_CONFIG), encoding="utf-8")
    (folder / "vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def pretraining_checkpoint(tmp_path_factory):
    """A Google pretraining checkpoint folder and the transformers model it came from."""
    model = random_transformers_model("BertForPreTraining")
    folder = tmp_path_factory.mktemp("google") / "uncased_L-2_H-32_A-4"
    return write_google_checkpoint(folder, google_variables(model)), model


def padded_batch():
    rng = np.random.default_rng(5)
    length = max(LENGTHS)
    padding_mask = np.arange(length)[None, :] < np.array(LENGTHS)[:, None]
    token_ids = np.where(padding_mask, rng.integers(5, len(VOCABULARY), (len(LENGTHS), length)), 0)
    segment_ids = np.zeros_like(token_ids)
    for row, real_length in enumerate(LENGTHS):
        segment_ids[row, real_length // 2 : real_length] = 1
    return {
        "token_ids": token_ids.astype("int32"),
        "segment_ids": segment_ids.astype("int32"),
        "padding_mask": padding_mask.astype("int32"),
    }


def transformers_outputs(model, batch):
    with torch.no_grad():
        return model(
            input_ids=torch.tensor(batch["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(batch["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(batch["padding_mask"], dtype=torch.long),
            output_hidden_states=True,
        )


def max_difference(actual, expected, padding_mask=None):
    actual, expected = keras.ops.convert_to_numpy(actual), np.asarray(expected)
    if padding_mask is not None:  # Padded positions are not compared.
        actual, expected = actual[padding_mask == 1], expected[padding_mask == 1]
    return float(np.max(np.abs(actual - expected)))


def test_pretraining_checkpoint_matches_transformers(tmp_path, pretraining_checkpoint, capsys):
    folder, hf_model = pretraining_checkpoint
    assert main(["convert", str(folder), str(tmp_path / "preset")]) == 0
    model = BertPretrainer.from_preset(tmp_path / "preset")

    batch = padded_batch()
    expected = transformers_outputs(hf_model, batch)
    outputs = model({**batch, "mask_positions": MASK_POSITIONS})
    sequence_output = model.backbone(batch)["sequence_output"]

    hf_mlm = np.take_along_axis(
        expected.prediction_logits.numpy(), MASK_POSITIONS[:, :, None], axis=1
    )
    differences = {
        "sequence_output": max_difference(
            sequence_output, expected.hidden_states[-1].numpy(), batch["padding_mask"]
        ),
        "mlm_logits": max_difference(outputs["mlm_logits"], hf_mlm),
        "nsp_logits": max_difference(
            outputs["nsp_logits"], expected.seq_relationship_logits.numpy()
        ),
    }
    print(f"google import max differences: {differences}")
    assert all(difference < TOLERANCE for difference in differences.values()), differences
    metadata = json.loads((tmp_path / "preset" / "metadata.json").read_text())
    assert metadata["source"] == "google"
    assert model.tokenizer.lowercase is True  # "uncased" in the folder name


def test_optimizer_slots_are_in_the_file_and_skipped(pretraining_checkpoint, caplog):
    folder, _ = pretraining_checkpoint
    names = {name for name, _ in tf.train.list_variables(str(folder / "bert_model.ckpt"))}
    assert "global_step" in names
    assert "bert/encoder/layer_0/attention/self/query/kernel/adam_m" in names
    assert "cls/predictions/output_bias/adam_v" in names

    with caplog.at_level(logging.INFO, logger="kbert.checkpoints"):
        model, _, _ = load_checkpoint(folder)
    assert isinstance(model, BertPretrainer)
    assert "skipped" in caplog.text and "optimizer" in caplog.text
    assert "not imported" not in caplog.text
    # The slots (filled with 9s and 7s) went nowhere near the model.
    for variable in model.weights:
        assert not np.all(keras.ops.convert_to_numpy(variable) == 9.0)


def test_casing_comes_from_the_folder_name_unless_given(tmp_path, pretraining_checkpoint, caplog):
    folder, _ = pretraining_checkpoint
    cased = shutil.copytree(folder, tmp_path / "cased_L-2_H-32_A-4")
    neutral = shutil.copytree(folder, tmp_path / "my_checkpoint")
    assert load_checkpoint(cased)[1].lowercase is False
    assert load_checkpoint(cased, lowercase=True)[1].lowercase is True
    with caplog.at_level(logging.WARNING, logger="kbert.checkpoints"):
        assert load_checkpoint(neutral)[1].lowercase is True
    assert "neither 'uncased' nor 'cased'" in caplog.text
    # convert's override reaches the written preset.
    convert(cased, tmp_path / "preset", lowercase=True)
    settings = json.loads((tmp_path / "preset" / "tokenizer_config.json").read_text())
    assert settings["lowercase"] is True
    # ... and so does the command line's.
    from kbert.cli import main

    assert main(["convert", str(neutral), str(tmp_path / "cli-preset"), "--cased"]) == 0
    settings = json.loads((tmp_path / "cli-preset" / "tokenizer_config.json").read_text())
    assert settings["lowercase"] is False


def test_a_missing_or_misshaped_variable_is_named(tmp_path, pretraining_checkpoint):
    _, hf_model = pretraining_checkpoint
    variables = google_variables(hf_model)
    del variables["bert/encoder/layer_1/attention/self/key/bias"]
    variables["bert/pooler/dense/kernel"] = np.zeros((32, 31), "float32")
    folder = write_google_checkpoint(tmp_path / "uncased_broken", variables, optimizer_state=False)
    with pytest.raises(ValueError) as error:
        convert(folder, tmp_path / "preset")
    message = str(error.value)
    assert "missing variable 'bert/encoder/layer_1/attention/self/key/bias'" in message
    assert "'bert/pooler/dense/kernel' has shape (32, 31), expected (32, 32)" in message
    assert not (tmp_path / "preset").exists()


def test_a_config_larger_than_the_checkpoint_is_refused_before_building(
    tmp_path, pretraining_checkpoint, monkeypatch
):
    from kbert.models import BertBackbone

    folder, _ = pretraining_checkpoint
    copy = tmp_path / "uncased_huge"
    shutil.copytree(folder, copy)
    config = dict(GOOGLE_CONFIG, vocab_size=10**6)
    (copy / "bert_config.json").write_text(json.dumps(config))
    monkeypatch.setattr(
        BertBackbone, "from_config_object", lambda *a: pytest.fail("a model was built")
    )
    with pytest.raises(ValueError, match=r"bert_config\.json: the config describes a model of"):
        load_checkpoint(copy)


@pytest.mark.parametrize(
    "architecture, kbert_class",
    [
        ("BertForQuestionAnswering", BertQuestionAnswerer),
        ("BertForSequenceClassification", BertClassifier),
    ],
)
def test_fine_tuned_checkpoints_keep_their_head(tmp_path, architecture, kbert_class):
    """run_squad.py (cls/squad/...) and run_classifier.py (output_weights) checkpoints."""
    extra = {"num_labels": 3} if architecture == "BertForSequenceClassification" else {}
    hf_model = random_transformers_model(architecture, **extra)
    folder = write_google_checkpoint(
        tmp_path / "uncased_finetuned", google_variables(hf_model), optimizer_state=False
    )
    model, _, _ = load_checkpoint(folder)
    assert isinstance(model, kbert_class)
    batch = padded_batch()
    expected = transformers_outputs(hf_model, batch)
    outputs = model(batch)
    if kbert_class is BertQuestionAnswerer:
        difference = max(
            max_difference(
                outputs["start_logits"], expected.start_logits.numpy(), batch["padding_mask"]
            ),
            max_difference(
                outputs["end_logits"], expected.end_logits.numpy(), batch["padding_mask"]
            ),
        )
    else:
        difference = max_difference(outputs, expected.logits.numpy())
    assert difference < TOLERANCE
