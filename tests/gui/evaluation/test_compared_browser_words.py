"""Two compared classifiers in the evaluation browser: the summary writes both models'
scores as the fine-tuning tab does (percentages, "macro F1", "MCC"), and the text column
keeps most of the table's width beside the label, tick and probability columns."""

from kbert.finetuning.evaluation_predictions import EvaluationPredictions
from kbert_gui.evaluation.compared_predictions import compare_predictions
from kbert_gui.evaluation.evaluation_browser import EvaluationBrowser
from kbert_gui.evaluation.evaluation_browser import summary_text

COLUMNS = ("index", "line", "text", "gold", "predicted", "probability", "correct")
TEXTS = ("She danced every dance at the ball.", "He sealed the letter and gave it away.")


def _predictions(predicted, scores):
    rows = tuple(
        {"index": index, "line": index + 2, "text": TEXTS[index % 2], "gold": gold,
         "predicted": guess, "probability": 0.61, "correct": gold == guess}
        for index, (gold, guess) in enumerate(zip(["ball", "letter"] * 6, predicted))
    )
    return EvaluationPredictions("classification", COLUMNS, rows, scores, ("ball", "letter"))


def _compared():
    first = _predictions(
        ["ball", "letter"] * 6, {"accuracy": 1.0, "macro_f1": 1.0, "matthews_corrcoef": 1.0}
    )
    second = _predictions(
        ["ball", "ball"] * 6, {"accuracy": 0.5, "macro_f1": 0.3333, "matthews_corrcoef": 0.0}
    )
    return compare_predictions(first, second)


def test_the_summary_writes_both_models_scores_in_the_apps_words():
    assert summary_text(_compared()) == (
        "classification, 12 examples: accuracy 100.0 % · macro F1 100.0 % · MCC 1.000; "
        "other model: accuracy 50.0 % · macro F1 33.3 % · MCC 0.000"
    )
    alone = _predictions(["ball", "letter"] * 6, {"accuracy": 0.875})
    assert summary_text(alone) == "classification, 12 examples: accuracy 87.5 %"


def test_the_text_column_keeps_most_of_the_width_of_a_comparison(qtbot):
    browser = EvaluationBrowser(_compared(), "train.csv — two models", file_dialogs=None)
    qtbot.addWidget(browser)
    browser.resize(1200, 640)
    browser.show()
    qtbot.waitExposed(browser)
    header = browser.table.horizontalHeader()
    widths = {key: header.sectionSize(column) for column, key in enumerate(browser.rows_model.keys)}
    # The labels ("letter") and ticks take what they need, not a fixed 90 pixels each.
    assert widths["gold"] < 90 and widths["agree"] < 90
    assert widths["text"] >= 0.3 * browser.table.viewport().width(), widths
    shown = browser.table.model().index(0, browser.rows_model.keys.index("gold")).data()
    metrics = header.fontMetrics()
    assert metrics.horizontalAdvance(shown) < widths["gold"]


def test_the_short_titles_of_a_comparison_say_what_they_mean_on_hover():
    from PySide6.QtCore import Qt

    from kbert_gui.evaluation.prediction_table_model import PredictionTableModel

    model = PredictionTableModel()
    model.set_predictions(_compared())
    column = model.keys.index("other_probability")
    tooltip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "other model" in tooltip
    assert model.headerData(column, Qt.Orientation.Horizontal) == "Other's p"
