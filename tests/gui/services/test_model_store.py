"""The model store: checkpoints converted once, task models cached, models described
and named after their run and task, the recent list."""

import pathlib

import pytest
from gui_helpers import make_context
from gui_helpers import make_hugging_face_folder

from kbert_gui.tab_key import TabKey


@pytest.fixture(scope="module")
def hugging_face_folder(tmp_path_factory):
    return make_hugging_face_folder(tmp_path_factory.mktemp("gui") / "hf-bert")


def test_model_store_converts_a_checkpoint_folder_once_and_loads_task_models(
    tmp_path, hugging_face_folder
):
    context = make_context(tmp_path, source=str(hugging_face_folder))
    store = context.models
    preset = store.preset_folder(store.source)
    assert preset.parent == tmp_path / "converted"
    written = (preset / "model.weights.h5").stat().st_mtime_ns
    assert store.preset_folder(store.source) == preset
    assert (preset / "model.weights.h5").stat().st_mtime_ns == written

    model = store.model("BertMaskedLM")
    assert type(model).__name__ == "BertMaskedLM"
    assert store.model("BertMaskedLM") is model
    assert model.fill_mask("w1 [MASK] w2").masks[0].start == 3
    store.forget(store.source)
    assert store.model("BertMaskedLM") is not model


def test_model_store_explains_a_missing_model(tmp_path):
    store = make_context(tmp_path, source=str(tmp_path / "nowhere")).models
    with pytest.raises(ValueError, match="No model at .*nowhere"):
        store.model("BertMaskedLM")


def test_model_store_describes_a_model_and_reports_its_conversion(tmp_path, hugging_face_folder):
    store = make_context(tmp_path, source=str(hugging_face_folder)).models
    events = []
    store.loading_started.connect(lambda message: events.append(("started", message)))
    store.loading_step.connect(lambda message: events.append(("step", message)))
    store.loading_finished.connect(lambda: events.append("finished"))
    described = []
    store.described.connect(described.append)

    description = store.describe()
    assert description.class_name == "BertMaskedLM" and description.kind == "masked LM"
    assert description.folder.parent == tmp_path / "converted"
    assert description.title == "hf-bert (masked LM)" and description.tab_key == TabKey.MASKED_WORDS
    assert f"kbert preset: {description.folder}" in description.details
    # The conversion's own log lines, between the start and the end of the work.
    assert events[0] == ("started", "Opening hf-bert…") and events[-1] == "finished"
    steps = [message for kind, message in events[1:-1]]
    assert any("is a huggingface checkpoint: converting it once" in step for step in steps)
    assert any(step.startswith("Wrote BertMaskedLM preset to") for step in steps)
    assert described == [description]

    # Described and loaded once: later calls are answered from the cache, silently.
    events.clear()
    assert store.describe() is description
    store.model("BertMaskedLM")
    assert events == [("started", "Loading hf-bert…"), "finished"]
    events.clear()
    store.model("BertMaskedLM")
    assert events == []


def test_model_names_come_from_the_run_and_the_task():
    from kbert_gui.services.model_description import ModelDescription
    from kbert_gui.services.model_description import short_name

    assert short_name("demo") == "demo" and short_name("hf://google-bert/bert-base") == (
        "hf://google-bert/bert-base"
    )
    assert short_name("/home/me/runs/sentiment/model") == "runs/sentiment"
    assert short_name("/home/me/presets/tiny") == "tiny"
    run = "/home/me/runs/sentiment/model"
    classifier = ModelDescription(run, pathlib.Path(run), "BertClassifier", ("neg", "pos"))
    assert classifier.title == "runs/sentiment (classifier: neg, pos)"
    assert classifier.tab_key == TabKey.CLASSIFY and classifier.is_fine_tuned
    tags = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC")
    tagger = ModelDescription(run, pathlib.Path(run), "BertTokenClassifier", tags)
    assert tagger.title == "runs/sentiment (tagger: PER, LOC)"
    many = ModelDescription(run, pathlib.Path(run), "BertClassifier", tuple("abcdefgh"))
    assert many.title == "runs/sentiment (classifier: a, b, c, d, e, … 8 labels)"
    qa = ModelDescription("squad", pathlib.Path("squad"), "BertQuestionAnswerer")
    assert (qa.title, qa.tab_key) == ("squad (question answering)", TabKey.QUESTION_ANSWERING)
    assert ModelDescription("demo", pathlib.Path("d"), "BertPretrainer").tab_key == TabKey.MASKED_WORDS


def test_model_store_remembers_recent_models(qtbot, tmp_path):
    store = make_context(tmp_path).models
    with qtbot.waitSignal(store.source_changed) as changed:
        store.set_source("/models/a")
    assert changed.args == ["/models/a"]
    store.set_source("/models/b")
    store.set_source("/models/a")
    assert store.recent_sources() == ["/models/a", "/models/b"]
