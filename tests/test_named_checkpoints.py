"""Published checkpoints by name: offline errors, conversion from the cache, never the network.

The download clients are replaced in every test: by functions that fail the test (the
offline path must not try), raise a connection error, or copy a local folder.
"""

import importlib
import json
import shutil

import pytest

from checkpoint_helpers import write_huggingface_folder
from kbert.checkpoints import named_checkpoints
from kbert.checkpoints import resolve_named_checkpoint
from kbert.cli import main
from kbert.models import BertPretrainer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
huggingface_hub = pytest.importorskip("huggingface_hub")

@pytest.fixture(scope="module")
def huggingface_folder(tmp_path_factory):
    """What `snapshot_download` would fetch: a (tiny) Hugging Face BERT folder."""
    return write_huggingface_folder(tmp_path_factory.mktemp("hub") / "bert-base-uncased")


@pytest.fixture(autouse=True)
def no_network(monkeypatch, tmp_path):
    """Any download attempt fails the test unless the test replaces it; the cache is private."""

    def forbidden(*args, **kwargs):
        pytest.fail("a download was attempted")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", forbidden)
    kagglehub = pytest.importorskip("kagglehub")
    monkeypatch.setattr(kagglehub, "model_download", forbidden)
    monkeypatch.setenv("KBERT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


def test_offline_without_files_says_which_files_go_where(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError) as error:
        resolve_named_checkpoint("bert-base-cased")
    message = str(error.value)
    downloads = tmp_path / "cache" / "downloads" / "bert-base-cased"
    assert "kbert is offline" in message
    assert str(downloads) in message
    assert "https://huggingface.co/google-bert/bert-base-cased" in message
    for name in ("config.json", "model.safetensors", "vocab.txt", "bert_model.ckpt.index"):
        assert name in message
    assert not (tmp_path / "cache" / "bert-base-cased").exists()


def test_a_connection_error_gives_the_same_instructions(tmp_path, monkeypatch):
    def unreachable(*args, **kwargs):
        raise ConnectionError("Failed to resolve 'huggingface.co'")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(ValueError) as error:
        resolve_named_checkpoint("bert-large-uncased-whole-word-masking", online=True)
    message = str(error.value)
    assert "the download failed: Failed to resolve 'huggingface.co'" in message
    assert (
        str(tmp_path / "cache" / "downloads" / "bert-large-uncased-whole-word-masking") in message
    )


def test_files_placed_in_the_cache_convert_offline_once(tmp_path, monkeypatch, huggingface_folder):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    shutil.copytree(huggingface_folder, tmp_path / "cache" / "downloads" / "bert-base-uncased")
    preset = resolve_named_checkpoint("bert-base-uncased")
    assert preset == tmp_path / "cache" / "bert-base-uncased"
    model = BertPretrainer.from_preset(preset)
    assert model.tokenizer.lowercase is True
    # Converted once: the second call returns the cached preset without converting.
    # (importlib: `kbert.checkpoints.convert` the attribute is the function.)
    convert_module = importlib.import_module("kbert.checkpoints.convert")

    monkeypatch.setattr(convert_module, "convert", lambda *a, **k: pytest.fail("converted twice"))
    assert resolve_named_checkpoint("bert-base-uncased") == preset


def test_online_download_goes_through_huggingface_hub(tmp_path, monkeypatch, huggingface_folder):
    calls = []

    def fake_snapshot_download(repo_id, allow_patterns=None, local_dir=None, **kwargs):
        calls.append((repo_id, allow_patterns))
        for name in allow_patterns:
            if (huggingface_folder / name).is_file():
                shutil.copy(huggingface_folder / name, local_dir)
        return str(local_dir)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    destination = tmp_path / "mine"
    assert main(["convert", "bert-base-uncased", str(destination)]) == 0
    assert calls[0][0] == "google-bert/bert-base-uncased"
    assert "model.safetensors" in calls[0][1] and "pytorch_model.bin" not in calls[0][1]
    metadata = json.loads((destination / "metadata.json").read_text())
    assert metadata["source_path"] == "bert-base-uncased"
    assert BertPretrainer.from_preset(destination).freshly_initialized_heads == []


def test_keras_hub_handles_go_through_kagglehub(tmp_path, monkeypatch, huggingface_folder):
    import kagglehub

    handles = []

    def fake_model_download(handle, *args, **kwargs):
        handles.append(handle)
        return str(huggingface_folder)  # any supported format converts

    monkeypatch.setattr(kagglehub, "model_download", fake_model_download)
    preset = resolve_named_checkpoint("bert-tiny-uncased", online=True, source="keras-hub")
    assert handles == ["keras/bert/keras/bert_tiny_en_uncased/3"]
    assert (preset / "model.weights.h5").is_file()
    with pytest.raises(ValueError, match="not published on keras-hub"):
        resolve_named_checkpoint("bert-mini-uncased", online=True, source="keras-hub")


def test_unknown_names_list_the_known_ones(tmp_path):
    with pytest.raises(
        ValueError, match="Unknown checkpoint name 'bert-gigantic'.*bert-base-uncased"
    ):
        resolve_named_checkpoint("bert-gigantic")
    assert main(["convert", "bert-gigantic", str(tmp_path / "out")]) == 1
    for name, entry in named_checkpoints.NAMED_CHECKPOINTS.items():
        assert entry.huggingface_id or entry.keras_hub_handle, name
