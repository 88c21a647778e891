"""The evaluation browser: its rows and confusion matrix are `kbert evaluate --predictions`'s,
its filters and a click on a matrix cell choose the rows in view, Export… writes them."""

import csv
import json

import pytest
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from fine_tuning_data import token_classification_examples
from gui_helpers import make_context
from gui_helpers import stop_context

from kbert.cli import main
from kbert_gui.evaluation.evaluation_launcher import EvaluationLauncher
from kbert_gui.services.evaluation_request import EvaluationRequest

SMALL_MODEL = dict(
    hidden_size=32, num_layers=1, num_heads=2, intermediate_size=48, max_positions=32
)


@pytest.fixture(scope="module")
def presets(tmp_path_factory):
    """A classifier and a tagger (untrained heads, saved as trained ones are) and their data."""
    from kbert.models import BertBackbone
    from kbert.models import BertClassifier
    from kbert.models import BertTokenClassifier
    from kbert.tokenizer import BertTokenizer

    folder = tmp_path_factory.mktemp("browser")
    preset = make_tiny_preset(folder / "preset", **SMALL_MODEL)
    backbone, tokenizer = BertBackbone.from_preset(preset), BertTokenizer.from_preset(preset)
    BertClassifier(backbone, label_names=["neg", "pos"]).save_to_preset(folder / "classifier", tokenizer)
    tags = ["O", "B-LOC", "B-PER", "I-PER"]
    BertTokenClassifier(backbone, label_names=tags).save_to_preset(folder / "tagger", tokenizer)
    with open(folder / "dev.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows([e.text, e.label] for e in classification_examples(24, seed=2))
    examples = token_classification_examples(6, seed=3)
    blocks = ["\n".join(f"{w} {t}" for w, t in zip(e.tokens, e.tags)) for e in examples]
    (folder / "dev.conll").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return folder


def _cli_rows(capsys, task, model, data, output):
    arguments = ["evaluate", "--task", task, "--model", str(model), "--data", str(data)]
    assert main(arguments + ["--predictions", str(output), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)["metrics"]
    return scores, [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]


def _open_browser(qtbot, tmp_path, request):
    context = make_context(tmp_path)
    launcher = EvaluationLauncher(context, None)
    opened, failures = [], []
    launcher.browser_opened.connect(opened.append)
    launcher.failed.connect(failures.append)
    worker = launcher.evaluate(request)
    qtbot.waitUntil(lambda: worker.is_done() and bool(opened or failures), timeout=120000)
    assert not failures
    browser = opened[0]
    qtbot.addWidget(browser)
    return context, browser


def _shown(browser, key):
    return [row[key] for row in browser.filter_model.shown_rows()]


def test_classifier_browser_shows_the_cli_rows_and_matrix_and_filters_them(
    qtbot, qtmodeltester, tmp_path, presets, capsys
):
    scores, cli_rows = _cli_rows(
        capsys, "classification", presets / "classifier", presets / "dev.csv", tmp_path / "p.jsonl"
    )
    request = EvaluationRequest(str(presets / "classifier"), "classification", str(presets / "dev.csv"))
    context, browser = _open_browser(qtbot, tmp_path, request)
    try:
        predictions = browser.predictions
        assert predictions.scores == pytest.approx(scores)
        assert len(predictions.rows) == len(cli_rows)
        for row, cli_row in zip(predictions.rows, cli_rows):
            assert {k: v for k, v in row.items() if k != "probability"} == {
                k: v for k, v in cli_row.items() if k != "probability"
            }
            assert row["probability"] == pytest.approx(cli_row["probability"], abs=1e-5)
        qtmodeltester.check(browser.rows_model)
        qtmodeltester.check(browser.matrix_model)

        # The matrix counts the CLI's gold/predicted pairs.
        labels = ["neg", "pos"]
        for gold_index, gold in enumerate(labels):
            for predicted_index, predicted in enumerate(labels):
                expected = sum(r["gold"] == gold and r["predicted"] == predicted for r in cli_rows)
                assert browser.matrix_model.count(gold_index, predicted_index) == expected

        # A click on a cell lists that pair; "Show all" brings every row back.
        cell = browser.matrix_model.index(0, 1)
        browser.matrix.clicked.emit(cell)
        pair = [r["index"] for r in cli_rows if r["gold"] == "neg" and r["predicted"] == "pos"]
        assert _shown(browser, "index") == pair
        assert browser.count_label.text() == f"{len(pair)} of {len(cli_rows)} examples shown"
        browser.filter_bar.clear_button.click()
        assert browser.filter_model.rowCount() == len(cli_rows)

        browser.filter_bar.errors_only.setChecked(True)
        assert _shown(browser, "index") == [r["index"] for r in cli_rows if not r["correct"]]
        browser.filter_bar.errors_only.setChecked(False)
        browser.filter_bar.low.setValue(0.5)
        browser.filter_bar.high.setValue(0.52)
        assert _shown(browser, "index") == [
            r["index"] for r in cli_rows if 0.5 <= r["probability"] <= 0.52
        ]
        browser.filter_bar.clear()
        browser.filter_bar.gold.setCurrentIndex(2)  # "pos"
        assert _shown(browser, "gold") == ["pos"] * sum(r["gold"] == "pos" for r in cli_rows)

        # Long texts are elided in the cell and whole in the tooltip.
        text_column = browser.rows_model.keys.index("text")
        tooltip = browser.rows_model.index(0, text_column).data(3)
        assert cli_rows[0]["text"] in tooltip and "Gold: neg" in tooltip

        # Export… writes the rows in view, as the CLI writes them.
        browser.filter_bar.clear()
        written = browser.export_to(tmp_path / "exported.csv")
        assert written is not None
        with open(tmp_path / "exported.csv", newline="", encoding="utf-8") as handle:
            exported = list(csv.DictReader(handle))
        assert [row["predicted"] for row in exported] == [r["predicted"] for r in cli_rows]
        browser.export_to(tmp_path / "exported.xlsx")
        assert "must end in .csv or .jsonl" in browser.export_message.text()
    finally:
        stop_context(context)


def test_tagger_browser_lists_entities_and_scores_per_type(qtbot, tmp_path, presets, capsys):
    scores, cli_rows = _cli_rows(
        capsys, "token-classification", presets / "tagger", presets / "dev.conll", tmp_path / "t.jsonl"
    )
    request = EvaluationRequest(str(presets / "tagger"), "token-classification", str(presets / "dev.conll"))
    context, browser = _open_browser(qtbot, tmp_path, request)
    try:
        assert browser.predictions.scores == pytest.approx(scores)
        assert [row["gold_entities"] for row in browser.predictions.rows] == [
            row["gold_entities"] for row in cli_rows
        ]
        types = [browser.entity_types_model.index(row, 0).data() for row in range(browser.entity_types_model.rowCount())]
        assert {"LOC", "PER"} <= set(types)
        column = browser.rows_model.keys.index("gold_entities")
        first = cli_rows[0]["gold_entities"][0]
        assert browser.rows_model.index(0, column).data().startswith(f"{first[0]} {first[3]}")
        assert not browser.filter_bar.gold.isVisible()
    finally:
        stop_context(context)


def test_a_model_without_the_task_head_is_refused_in_one_sentence(qtbot, tmp_path, presets):
    context = make_context(tmp_path)
    launcher = EvaluationLauncher(context, None)
    request = EvaluationRequest(str(presets / "preset"), "classification", str(presets / "dev.csv"))
    try:
        with qtbot.waitSignal(launcher.failed, timeout=120000) as failed:
            launcher.evaluate(request)
        assert "has no text classification head" in failed.args[0]
        assert "\n" not in failed.args[0]
    finally:
        stop_context(context)
