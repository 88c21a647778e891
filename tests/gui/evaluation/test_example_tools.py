"""LIT's habits in the evaluation browser: an example edited and predicted again in place
with its saliency, a map of the examples' embeddings whose selection is the table's, and
two classifiers compared on one file, down to where they disagree."""

import numpy
import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from fine_tuning_helpers import SMALL_MODEL
from fine_tuning_helpers import write_csv
from gui_helpers import make_context
from gui_helpers import stop_context
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtCore import Qt

from kbert_gui.evaluation.evaluation_launcher import EvaluationLauncher
from kbert_gui.evaluation.example_prediction import ExamplePrediction
from kbert_gui.evaluation.example_prediction import project_2d
from kbert_gui.services.evaluation_request import EvaluationRequest


@pytest.fixture(scope="module")
def presets(tmp_path_factory):
    """Two classifiers on one tiny backbone (heads differently random) and a file."""
    import keras

    from kbert.models import BertBackbone
    from kbert.models import BertClassifier
    from kbert.tokenizer import BertTokenizer

    folder = tmp_path_factory.mktemp("example_tools")
    preset = make_tiny_preset(folder / "preset", **SMALL_MODEL)
    tokenizer = BertTokenizer.from_preset(preset)
    for seed, name in ((1, "first"), (2, "second")):
        keras.utils.set_random_seed(seed)
        head = BertClassifier(BertBackbone.from_preset(preset), label_names=["neg", "pos"])
        head.save_to_preset(folder / name, tokenizer)
    write_csv(folder / "dev.csv", classification_examples(16, seed=4))
    return folder


def _browser(qtbot, tmp_path, presets, other=None):
    context = make_context(tmp_path)
    launcher = EvaluationLauncher(context, None)
    opened, failures = [], []
    launcher.browser_opened.connect(opened.append)
    launcher.failed.connect(failures.append)
    request = EvaluationRequest(str(presets / "first"), "classification", str(presets / "dev.csv"))
    worker = launcher.evaluate(request) if other is None else launcher.compare(request, other)
    qtbot.waitUntil(lambda: worker.is_done() and bool(opened or failures), timeout=120_000)
    assert not failures
    qtbot.addWidget(opened[0])
    return context, opened[0]


def test_an_edited_example_is_predicted_again_in_its_row_with_its_saliency(
    qtbot, tmp_path, presets
):
    from kbert.inference import classify
    from kbert.models import BertClassifier

    context, browser = _browser(qtbot, tmp_path, presets)
    try:
        tools = browser.tools
        assert tools is not None and tools.editor.position is None
        browser.table.setCurrentIndex(browser.filter_model.index(2, 0))
        position = tools.editor.position
        record = browser.rows_model.records[position]
        assert tools.editor.text_edit.toPlainText() == record["text"]
        tools.editor.text_edit.setPlainText("a wholly new text")
        tools.editor.predict_button.click()
        qtbot.waitUntil(
            lambda: "edited" in browser.rows_model.records[position], timeout=60_000
        )
        edited = browser.rows_model.records[position]
        expected = classify(BertClassifier.from_preset(presets / "first"), None, "a wholly new text")
        assert edited["text"] == "a wholly new text" and edited["predicted"] == expected.label
        assert edited["probability"] == pytest.approx(expected.probability, abs=1e-4)
        assert edited["correct"] == (expected.label == record["gold"])
        # The same row of the table shows it; its pieces are shaded in the editor.
        row = browser.filter_model.rows_of([position])[0]
        assert browser.filter_model.index(row, 0).isValid()
        shown = [browser.filter_model.data(browser.filter_model.index(row, column))
                 for column in range(browser.filter_model.columnCount())]
        assert "a wholly new text" in shown
        assert "background-color" in tools.editor.saliency_label.text()
        assert expected.label in tools.editor.result_label.text()
    finally:
        stop_context(context)


def test_the_map_colours_every_example_and_shares_the_tables_selection(
    qtbot, tmp_path, presets
):
    context, browser = _browser(qtbot, tmp_path, presets)
    try:
        tools, records = browser.tools, browser.rows_model.records
        tools.setCurrentIndex(1)
        qtbot.waitUntil(lambda: bool(tools.map.legend()), timeout=60_000)
        assert set(tools.map.legend()) == {record["gold"] for record in records}
        tools.colour_box.setCurrentText("Right or wrong")
        assert set(tools.map.legend()) <= {"right", "wrong"}
        tools.map.resize(400, 300)
        # A click on a point selects its row.
        qtbot.mouseClick(tools.map, Qt.MouseButton.LeftButton, pos=tools.map.point_at(5).toPoint())
        selected = browser.table.selectionModel().selectedRows()
        assert browser.filter_model.records_at([i.row() for i in selected]).tolist() == [5]
        # Rows selected in the table are ringed on the map.
        view = browser.filter_model
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        browser.table.selectionModel().select(view.index(1, 0), flags)
        assert tools.map.selected() == view.records_at([1]).tolist()
    finally:
        stop_context(context)


def test_two_classifiers_on_one_file_list_where_they_disagree(qtbot, tmp_path, presets):
    context, browser = _browser(qtbot, tmp_path, presets, other=presets / "second")
    try:
        rows = browser.predictions.rows
        assert "other_predicted" in browser.rows_model.keys
        assert "other_accuracy" in browser.predictions.scores
        browser.disagree_only.setChecked(True)
        expected = [row["index"] for row in rows if row["predicted"] != row["other_predicted"]]
        assert [row["index"] for row in browser.filter_model.shown_rows()] == expected
        browser.filter_bar.errors_only.setChecked(True)
        assert [row["index"] for row in browser.filter_model.shown_rows()] == [
            row["index"] for row in rows
            if row["predicted"] != row["other_predicted"] and not row["correct"]
        ]
        browser.disagree_only.setChecked(False)
        assert browser.filter_model.rowCount() == sum(not row["correct"] for row in rows)
        _an_edit_is_predicted_by_both_models(qtbot, browser, presets)
    finally:
        stop_context(context)


def _an_edit_is_predicted_by_both_models(qtbot, browser, presets):
    from kbert.inference import classify
    from kbert.models import BertClassifier

    browser.filter_bar.errors_only.setChecked(False)
    tools = browser.tools
    browser.table.setCurrentIndex(browser.filter_model.index(0, 0))
    position = tools.editor.position
    tools.editor.text_edit.setPlainText("a wholly new text")
    tools.editor.predict_button.click()
    qtbot.waitUntil(lambda: "edited" in browser.rows_model.records[position], timeout=60_000)
    edited = browser.rows_model.records[position]
    first, second = (
        classify(BertClassifier.from_preset(presets / name), None, "a wholly new text")
        for name in ("first", "second")
    )
    assert edited["predicted"] == first.label
    assert edited["other_predicted"] == second.label
    assert edited["other_probability"] == pytest.approx(second.probability, abs=1e-4)
    assert edited["agree"] == (first.label == second.label)


def test_the_map_projects_onto_the_two_directions_of_most_spread():
    generator = numpy.random.default_rng(0)
    along = generator.normal(size=40)
    vectors = numpy.outer(along, [3.0, 0, 0, 4.0]) + generator.normal(scale=0.01, size=(40, 4))
    projected = project_2d(vectors)
    assert projected.shape == (40, 2)
    assert abs(numpy.corrcoef(projected[:, 0], along)[0, 1]) > 0.99
    assert projected[:, 0].std() > 50 * projected[:, 1].std()


def test_evaluate_with_a_second_model_compares_the_two(qtbot, tmp_path, monkeypatch):
    from kbert_gui.evaluation.evaluate_file_dialog import EvaluateFileDialog

    def answer(dialog):
        dialog.model_edit.setText("runs/a/model")
        dialog.data_edit.setText("dev.csv")
        dialog.other_edit.setText("runs/b/model")
        return EvaluateFileDialog.DialogCode.Accepted

    monkeypatch.setattr(EvaluateFileDialog, "exec", answer)
    context = make_context(tmp_path)
    launcher = EvaluationLauncher(context, None)
    calls = []
    monkeypatch.setattr(launcher, "compare", lambda *args: calls.append(("compare", *args)))
    monkeypatch.setattr(launcher, "evaluate", lambda *args: calls.append(("evaluate", *args)))
    launcher.ask()
    request = EvaluationRequest("runs/a/model", "classification", "dev.csv")
    assert calls == [("compare", request, "runs/b/model")]
    stop_context(context)


def test_an_edited_row_of_two_compared_models_says_whether_they_still_agree():
    old = {"index": 0, "text": "a", "gold": "pos", "predicted": "pos", "probability": 0.9,
           "correct": True, "other_predicted": "neg", "other_probability": 0.6, "agree": False}
    record = ExamplePrediction(0, "b", None, "neg", 0.7, None).record(old)
    assert (record["text"], record["predicted"], record["correct"]) == ("b", "neg", False)
    assert record["agree"] is True and record["edited"] is True
    assert old["agree"] is False  # the old row is left as it was
