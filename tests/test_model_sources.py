"""One resolver for every model source: `from_preset`, `--model` and SRC take the same forms.

A Hugging Face, Google or keras-hub folder, a published name and an `hf://` / `kaggle://`
handle must give the model `kbert convert` then `from_preset` gives. Download clients are
replaced in every test; the cache is private to the test.
"""

import json
import logging
import shutil

import numpy as np
import pytest

from checkpoint_helpers import VOCABULARY
from checkpoint_helpers import write_huggingface_folder
from kbert.checkpoints import convert
from kbert.cli import main
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertPretrainer
from kbert.presets import resolve_preset
from kbert.presets import model_source

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
huggingface_hub = pytest.importorskip("huggingface_hub")
kagglehub = pytest.importorskip("kagglehub")

INPUTS = {
    "token_ids": np.array([[2, 7, 9, 12, 3, 0], [2, 5, 6, 3, 8, 3]], dtype="int32"),
    "segment_ids": np.array([[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1]], dtype="int32"),
    "padding_mask": np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]], dtype="int32"),
    "mask_positions": np.array([[1, 2], [3, 4]], dtype="int32"),
}


@pytest.fixture(scope="module")
def huggingface_folder(tmp_path_factory):
    return write_huggingface_folder(tmp_path_factory.mktemp("hub") / "bert-tiny-hf")


@pytest.fixture(autouse=True)
def private_cache(monkeypatch, tmp_path):
    """No download unless a test allows it; the cache lives in the test's folder."""

    def forbidden(*args, **kwargs):
        pytest.fail("a download was attempted")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", forbidden)
    monkeypatch.setattr(kagglehub, "model_download", forbidden)
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return tmp_path / "cache"


def _outputs(model):
    outputs = model.predict_on_batch(INPUTS)
    return {key: np.asarray(value) for key, value in outputs.items()}


def _assert_same_model(model, reference):
    assert type(model) is type(reference)
    expected = _outputs(reference)
    for key, value in _outputs(model).items():
        np.testing.assert_array_equal(value, expected[key], err_msg=key)
    assert model.tokenizer.vocabulary == reference.tokenizer.vocabulary


def _converted_reference(source, tmp_path):
    destination = tmp_path / "reference"
    convert(source, destination)
    return BertPretrainer.from_preset(destination)


def test_a_huggingface_folder_loads_directly_converted_once_into_the_cache(
    tmp_path, huggingface_folder, private_cache, monkeypatch, caplog
):
    with caplog.at_level(logging.INFO, logger="kbert.presets"):
        model = BertPretrainer.from_preset(huggingface_folder)
    _assert_same_model(model, _converted_reference(huggingface_folder, tmp_path))
    converted = resolve_preset(huggingface_folder)
    assert converted.parent == private_cache / "converted"
    assert any("converting it once" in record.getMessage() for record in caplog.records)

    convert_module = __import__("kbert.checkpoints.convert", fromlist=["convert"])
    monkeypatch.setattr(convert_module, "convert", lambda *a, **k: pytest.fail("converted twice"))
    assert resolve_preset(str(huggingface_folder)) == converted


def test_the_cache_key_follows_the_folder_contents(tmp_path):
    folder = write_huggingface_folder(tmp_path / "hf", seed=1)
    first = resolve_preset(folder)
    # Same names and sizes, other weights: another key, another conversion.
    write_huggingface_folder(folder, seed=2)
    second = resolve_preset(folder)
    assert first != second and first.parent == second.parent
    before = BertBackbone.from_preset(first).get_layer("pooler").weights[0]
    after = BertBackbone.from_preset(second).get_layer("pooler").weights[0]
    assert not np.array_equal(np.asarray(before), np.asarray(after))
    # A copy elsewhere has the same contents: the same conversion serves it.
    shutil.copytree(folder, tmp_path / "copy")
    assert resolve_preset(tmp_path / "copy") == second


def test_a_google_folder_loads_directly(tmp_path):
    from test_google_import import google_variables
    from test_google_import import random_transformers_model
    from test_google_import import write_google_checkpoint

    model = random_transformers_model("BertForPreTraining")
    folder = write_google_checkpoint(tmp_path / "uncased_L-2_H-32_A-4", google_variables(model))
    direct = BertPretrainer.from_preset(folder)
    assert direct.tokenizer.lowercase is True  # read from the folder name, as convert does
    _assert_same_model(direct, _converted_reference(folder, tmp_path))


def test_a_keras_hub_folder_loads_directly(tmp_path):
    keras_hub = pytest.importorskip("keras_hub")
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=len(VOCABULARY), num_layers=1, num_heads=2, hidden_dim=16,
        intermediate_dim=20, max_sequence_length=16,
    )
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=VOCABULARY, lowercase=True)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(tokenizer, sequence_length=16)
    folder = tmp_path / "keras_hub_preset"
    keras_hub.models.BertMaskedLM(backbone, preprocessor=preprocessor).save_to_preset(str(folder))
    direct = BertBackbone.from_preset(folder)
    convert(folder, tmp_path / "reference")
    reference = BertBackbone.from_preset(tmp_path / "reference")
    inputs = {key: INPUTS[key] for key in ("token_ids", "segment_ids", "padding_mask")}
    for key, value in direct.predict_on_batch(inputs).items():
        np.testing.assert_array_equal(value, reference.predict_on_batch(inputs)[key])


def _fake_snapshot_download(source_folder, calls):
    def snapshot_download(repo_id, allow_patterns=None, local_dir=None, **kwargs):
        calls.append(repo_id)
        for path in source_folder.iterdir():
            if any(path.match(pattern) for pattern in allow_patterns):
                shutil.copy(path, local_dir)
        return str(local_dir)

    return snapshot_download


def test_published_names_and_aliases_resolve_with_the_hub_client(
    tmp_path, huggingface_folder, monkeypatch
):
    calls = []
    monkeypatch.setattr(
        huggingface_hub, "snapshot_download", _fake_snapshot_download(huggingface_folder, calls)
    )
    classifier = BertClassifier.from_preset("bert-tiny-uncased", num_classes=3)
    assert calls == ["google/bert_uncased_L-2_H-128_A-2"]
    assert classifier.num_classes == 3 and classifier.freshly_initialized_heads
    # The systematic name and the Hugging Face id are the same checkpoint: no download.
    for alias in ("bert-uncased-L-2-H-128", "google/bert_uncased_L-2_H-128_A-2"):
        assert resolve_preset(alias) == resolve_preset("bert-tiny-uncased")
    assert calls == ["google/bert_uncased_L-2_H-128_A-2"]
    _assert_same_model(
        BertPretrainer.from_preset("bert-tiny-uncased"),
        _converted_reference(huggingface_folder, tmp_path),
    )


def test_hf_handles_download_once_and_match_convert(tmp_path, huggingface_folder, monkeypatch):
    calls = []
    monkeypatch.setattr(
        huggingface_hub, "snapshot_download", _fake_snapshot_download(huggingface_folder, calls)
    )
    model = BertPretrainer.from_preset("hf://someone/tiny-bert")
    assert calls[0] == "someone/tiny-bert"
    _assert_same_model(model, _converted_reference(huggingface_folder, tmp_path))
    count = len(calls)
    BertBackbone.from_preset("hf://someone/tiny-bert")
    assert len(calls) == count
    with pytest.raises(ValueError, match="hf://owner/name"):
        resolve_preset("hf://not-a-repo-id")


def test_hf_handles_offline_say_where_files_go(monkeypatch, private_cache):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="offline") as error:
        resolve_preset("hf://someone/other-bert")
    assert str(private_cache / "downloads" / "hf" / "someone" / "other-bert") in str(error.value)


def test_kaggle_handles_go_through_kagglehub(tmp_path, huggingface_folder, monkeypatch):
    handles = []

    def model_download(handle, *args, **kwargs):
        handles.append(handle)
        return str(huggingface_folder)

    monkeypatch.setattr(kagglehub, "model_download", model_download)
    model = BertPretrainer.from_preset("kaggle://keras/bert/keras/bert_tiny_en_uncased/3")
    assert handles == ["keras/bert/keras/bert_tiny_en_uncased/3"]
    _assert_same_model(model, _converted_reference(huggingface_folder, tmp_path))
    with pytest.raises(ValueError, match="kaggle://owner/model/framework/variation"):
        resolve_preset("kaggle://keras/bert")


def test_unknown_sources_say_what_they_are_not_and_the_forms_in_three_lines(tmp_path):
    with pytest.raises(ValueError) as error:
        resolve_preset("bert-tiny-uncasd")
    message = str(error.value)
    assert message.count("\n") <= 2, message
    assert "not a built-in preset (demo, demo-spam, demo-tiny)" in message
    assert "Did you mean: bert-tiny-uncased" in message
    for form in ("hf://owner/name", "kaggle://", "kbert preset folder", "checkpoint folder"):
        assert form in message
    assert "`kbert convert --help` lists every form" in message
    with pytest.raises(ValueError, match="write hf://someone/model") as error:
        resolve_preset("someone/model")
    assert str(error.value).count("\n") <= 2, str(error.value)
    with pytest.raises(ValueError, match="No model at .*nowhere") as error:
        resolve_preset(str(tmp_path / "nowhere"))
    assert str(error.value).count("\n") <= 2, str(error.value)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="is not a model folder") as error:
        BertPretrainer.from_preset(empty)
    assert "\n" not in str(error.value) and "The folder holds: notes.txt." in str(error.value)


def test_the_forms_and_formats_the_errors_leave_out_are_in_convert_help(capsys):
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    help_text = capsys.readouterr().out
    for form in model_source.ACCEPTED_FORMS:
        assert " ".join(form.split()[:4]) in help_text, form
    for listed in ("bert_model.ckpt.index", "model.safetensors", "format_version", "task.json"):
        assert listed in help_text, listed


# huggingface_hub's own text: several lines of advice that kbert's hint replaces.
HUB_CONNECTION_ERROR = (
    "Got: ConnectError: [Errno -2] Name or service not known\n"
    "An error happened while trying to locate the files on the Hub ... Please check your "
    "internet connection and try again."
)


def test_every_download_failure_says_how_to_go_offline_in_three_lines(monkeypatch, private_cache):
    def unreachable(*args, **kwargs):
        raise OSError(HUB_CONNECTION_ERROR)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    monkeypatch.setattr(kagglehub, "model_download", unreachable)
    messages = {}
    for source in ("hf://someone/model", "kaggle://keras/bert/keras/bert_tiny_en_uncased", "bert-base-cased"):
        with pytest.raises(ValueError) as error:
            resolve_preset(source)
        messages[source] = str(error.value)
    for source, message in messages.items():
        assert message.count("\n") <= 2, message
        assert "the download failed: ConnectError: [Errno -2] Name or service not known" in message
        assert "check your internet connection" not in message, message
        assert "To use it offline" in message, message
    hf_downloads = private_cache / "downloads" / "hf" / "someone" / "model"
    assert str(hf_downloads) in messages["hf://someone/model"]
    kaggle_page = "https://www.kaggle.com/models/keras/bert/keras/bert_tiny_en_uncased"
    assert kaggle_page in messages["kaggle://keras/bert/keras/bert_tiny_en_uncased"]
    assert str(private_cache / "downloads" / "bert-base-cased") in messages["bert-base-cased"]


def test_every_command_takes_every_source(tmp_path, huggingface_folder, capsys):
    # `export` and `convert` read names, not only folders.
    assert main(["export", "demo", str(tmp_path / "hf"), "--format", "huggingface"]) == 0
    assert (tmp_path / "hf" / "model.safetensors").is_file()
    assert main(["convert", "demo", str(tmp_path / "copy")]) == 0
    _assert_same_model(BertPretrainer.from_preset(tmp_path / "copy"), BertPretrainer.from_preset("demo"))
    # Inference commands take checkpoint folders.
    capsys.readouterr()
    assert main(["fill-mask", "--model", str(huggingface_folder), "--json", "word1 [MASK]"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["masks"]
    assert model_source.is_local_source(str(huggingface_folder))
    assert not model_source.is_local_source("hf://a/b")
