"""A task added from outside kbert: its model, preprocessor, recipe and one row per table
(tests/toy_regression.py), and the command line, presets, `.keras` files, the weight
layout, fine-tuning probes, the app's model description and its "Classify & tag" tab all
take it."""

import csv
import dataclasses
import json

import keras
import numpy as np
import pytest

from fine_tuning_data import make_tiny_preset
from kbert.architecture import bert_layout
from kbert.cli import main
from kbert.finetuning.task_specs import TASK_SPECS
from kbert.finetuning.task_specs import register_task
from kbert.model_table import MODEL_CLASSES
from kbert.model_table import ModelClass
from kbert.model_table import model_class
from kbert.model_table import register_model_class
from kbert.models import BertClassifier
from kbert.models import BertTask
from toy_regression import MODEL_ROW
from toy_regression import TASK
from toy_regression import TASK_ROW
from toy_regression import BertRegressor
from toy_regression import registered_toy_task

TEXTS = ("the cat sat", "a good dog", "the red house near the river", "great blue sky")


@pytest.fixture(scope="module")
def toy_task():
    with registered_toy_task():
        yield


@pytest.fixture(scope="module")
def fine_tuned(toy_task, tmp_path_factory):
    """`(run folder, exit status)` of `kbert finetune --task toy-regression`."""
    folder = tmp_path_factory.mktemp("toy")
    preset = make_tiny_preset(folder / "preset", num_layers=1, hidden_size=32, num_heads=2)
    train = folder / "train.csv"
    with open(train, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["sentence", "score"])
        writer.writerows((text, f"{index / 4:.2f}") for index, text in enumerate(TEXTS))
    arguments = [
        "finetune", "--task", TASK, "--model", str(preset), "--train", str(train),
        "--eval", str(train), "--output", str(folder / "run"), "--text-column", "sentence",
        "--label-column", "score", "--epochs", "1", "--batch-size", "4", "--json",
    ]  # fmt: skip
    return folder / "run", main(arguments)


def test_the_command_line_fine_tunes_the_toy_task_and_its_model_loads(fine_tuned):
    run, status = fine_tuned
    assert status == 0
    model = BertTask.from_preset(run / "model")
    assert type(model) is BertRegressor and not model.freshly_initialized_heads
    metadata = json.loads((run / "model" / "metadata.json").read_text(encoding="utf-8"))
    assert metadata["fine_tuning"]["negative_mse"] <= 0  # the recipe scored the epoch
    assert metadata["fine_tuning"]["task"] == TASK  # what the model was trained for
    # A fine-tuning probe answers with the row's inference verb.
    assert isinstance(TASK_SPECS[TASK].predict(model, {"text": "a good cat"}), float)


def test_a_preset_of_the_toy_task_keeps_its_weights_and_class(fine_tuned, tmp_path):
    model = BertTask.from_preset(fine_tuned[0] / "model")
    model.save_to_preset(tmp_path / "again")
    config = json.loads((tmp_path / "again" / "config.json").read_text(encoding="utf-8"))
    assert config["class_name"] == "BertRegressor"
    assert config["registered_name"] == "kbert_toy>BertRegressor"
    loaded = BertRegressor.from_preset(tmp_path / "again")
    assert [v.path for v in loaded.weights] == [v.path for v in model.weights]
    for mine, theirs in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(mine), keras.ops.convert_to_numpy(theirs))
    # Messages about its preset read what it holds from its row.
    with pytest.raises(ValueError, match=r"it is a BertRegressor \(a regression head\)"):
        BertClassifier.from_preset(tmp_path / "again")


def test_the_toy_model_builds_the_layout_its_row_declares(fine_tuned):
    from kbert.models.preset_saving import checkpoint_data

    model = BertTask.from_preset(fine_tuned[0] / "model")
    built = {path: value.shape for path, value in checkpoint_data(model).weights.items()}
    layout = {v.path: v.shape for v in bert_layout.model_variables(model.bert_config, "BertRegressor")}
    assert built == layout and "head/regression_head/kernel" in layout


def test_a_keras_file_of_the_toy_task_loads_back(fine_tuned, tmp_path):
    model = BertTask.from_preset(fine_tuned[0] / "model")
    model.save(tmp_path / "toy.keras")
    loaded = keras.saving.load_model(tmp_path / "toy.keras")
    assert type(loaded) is BertRegressor and loaded.tokenizer is not None
    assert loaded.regress(TEXTS[0]) == pytest.approx(model.regress(TEXTS[0]), abs=1e-5)


def test_the_app_describes_the_toy_model_from_its_row(fine_tuned):
    from kbert_gui.services.model_description import ModelDescription
    from kbert_gui.tab_key import TabKey

    description = ModelDescription.read(str(fine_tuned[0] / "model"), fine_tuned[0] / "model")
    assert description.class_name == "BertRegressor" and description.kind == "regressor"
    assert description.tab_key == TabKey.CLASSIFY and description.is_fine_tuned


def test_the_command_line_offers_a_registered_task(toy_task, capsys):
    with pytest.raises(SystemExit):
        main(["finetune", "--help"])
    assert TASK in capsys.readouterr().out
    assert MODEL_CLASSES["BertRegressor"] is MODEL_ROW


def test_the_model_table_refuses_rows_that_clash():
    with pytest.raises(ValueError, match="the class name 'BertClassifier' is taken"):
        register_model_class(ModelClass(name="BertClassifier", module="elsewhere"))
    with pytest.raises(ValueError, match="head layer 'masked_lm_head' has other variables"):
        register_model_class(
            ModelClass(
                name="BertOther",
                module="elsewhere",
                head_layers=(("masked_lm_head", (("kernel", ("H", "V")),)),),
            )
        )
    with pytest.raises(ValueError, match="must be a kbert.model_table.ModelClass"):
        register_model_class({"name": "BertOther"})
    with pytest.raises(ValueError, match=r"shape of `head/kernel` must be a tuple"):
        ModelClass(name="BertOther", module="m", head_layers=(("head", (("kernel", ("H", "X")),)),))
    with pytest.raises(ValueError, match="`app_tab` must be one of"):
        ModelClass(name="BertOther", module="m", app_tab="elsewhere")
    with pytest.raises(ValueError, match="Received: class_name='BertOther'"):
        model_class("BertOther")
    assert "BertOther" not in MODEL_CLASSES


def test_the_task_table_refuses_rows_that_clash():
    with pytest.raises(ValueError, match="The task name 'qa' is taken"):
        register_task(dataclasses.replace(TASK_ROW, name="qa"))
    with pytest.raises(ValueError, match="Received: head='BertOther'"):
        register_task(dataclasses.replace(TASK_ROW, name="toy-other", head="BertOther"))
    with pytest.raises(ValueError, match="must be a kbert.finetuning.TaskSpec"):
        register_task({"name": TASK})
    assert "toy-other" not in TASK_SPECS


def _classify_tab(qtbot, tmp_path, source):
    from gui_helpers import make_context
    from kbert_gui.classify.classify_tab import ClassifyTab

    tab = ClassifyTab(make_context(tmp_path, source))
    qtbot.addWidget(tab)
    return tab


def test_the_app_classify_tab_runs_the_toy_model_from_its_rows(fine_tuned, qtbot, tmp_path):
    pytest.importorskip("PySide6")
    from gui_helpers import stop_context
    from kbert_gui.classify.classify_format import export_document
    from kbert_gui.classify.classify_format import export_rows

    source = str(fine_tuned[0] / "model")
    tab = _classify_tab(qtbot, tmp_path, source)
    try:
        tab.set_text(TEXTS[1])
        qtbot.waitUntil(
            lambda: (tab.outcome is not None and tab.outcome.text == TEXTS[1])
            or bool(tab.error_banner.message),
            timeout=60_000,
        )
        assert tab.error_banner.message == "" and tab.head_warning.message == ""
        expected = BertRegressor.from_preset(source).regress(TEXTS[1])
        assert tab.outcome.value == pytest.approx(expected, abs=1e-5)
        # The row's kind and verb say what the head does; the value is the headline.
        assert tab.head_label.text() == "Regressor: type a text to see its regress result."
        assert tab.headline_label.text() == f"{tab.outcome.value:.4g}"
        assert not tab.pair_edit.isVisibleTo(tab) and not tab.saliency_panel.isVisibleTo(tab)
        assert export_document(tab.outcome)["value"] == tab.outcome.value
        assert export_rows(tab.outcome, ()) == (
            ("text", "value"), [{"text": TEXTS[1], "value": tab.outcome.value}]
        )
    finally:
        stop_context(tab.context)


def test_a_head_of_another_tab_says_which_tab_shows_it(fine_tuned, qtbot, tmp_path):
    pytest.importorskip("PySide6")
    from gui_helpers import stop_context

    MODEL_CLASSES["BertRegressor"] = dataclasses.replace(MODEL_ROW, app_tab="question-answering")
    tab = _classify_tab(qtbot, tmp_path, str(fine_tuned[0] / "model"))
    try:
        tab.set_text(TEXTS[1])
        qtbot.waitUntil(lambda: bool(tab.head_warning.message), timeout=60_000)
        assert "is a regressor model: this tab does not show its results" in (
            tab.head_warning.message
        )
        assert "Question answering tab</a> does" in tab.head_warning.message
        assert tab.outcome is None
    finally:
        MODEL_CLASSES["BertRegressor"] = MODEL_ROW
        stop_context(tab.context)
