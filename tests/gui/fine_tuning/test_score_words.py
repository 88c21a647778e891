"""How the fine-tuning tab names scores and writes numbers: in words, not raw keys, and
every score as a percentage, whether kbert reports it as a fraction or (SQuAD) in percent."""

import pathlib

from PySide6.QtCore import Qt

from kbert.finetuning.fine_tuning_result import FineTuningResult
from kbert_gui.fine_tuning.evaluation_table_model import EvaluationTableModel
from kbert_gui.fine_tuning.fine_tuning_format import epoch_line
from kbert_gui.fine_tuning.fine_tuning_format import result_summary
from kbert_gui.fine_tuning.fine_tuning_format import result_table
from kbert_gui.services.score_words import score_text
from kbert_gui.services.score_words import scores_in_percent


def _squad_result():
    return FineTuningResult(
        status="completed",
        metric="exact_match",
        best_metric=66.666667,
        best_epoch=2,
        final_metrics={},
        preset_path=pathlib.Path("runs/squad/model"),
        checkpoint_path=pathlib.Path("runs/squad/training_checkpoint.h5"),
        history=[
            {"epoch": 1, "loss": 0.69912, "exact_match": 33.333333, "f1": 40.5},
            {"epoch": 2, "loss": 0.41234, "exact_match": 66.666667, "f1": 71.25},
        ],
        global_step=8,
    )


def test_a_squad_runs_scores_are_named_in_words_and_written_as_percentages():
    result = _squad_result()
    percent = scores_in_percent("qa")
    assert percent and not scores_in_percent("classification")
    assert result_summary(result, percent) == "best exact match 66.7 % at epoch 2"
    assert result_table(result)[2] == "Best exact match: this epoch's model was saved."
    assert epoch_line(2, result.history[1], percent) == (
        "Epoch 2: training loss 0.412, exact match 66.7 %, F1 71.2 %"
    )
    # A classifier's fractions read the same way as SQuAD's percentages.
    assert epoch_line(1, {"loss": 0.69912, "accuracy": 0.875, "macro_f1": 0.5}) == (
        "Epoch 1: training loss 0.699, accuracy 87.5 %, macro F1 50.0 %"
    )
    assert score_text("matthews_corrcoef", -0.25) == "-0.250"
    assert score_text("learning_rate", 3e-5) == "3e-05"


def test_the_evaluation_table_writes_every_score_alike(qtmodeltester):
    model = EvaluationTableModel()
    model.in_percent = True
    model.set_rows(_squad_result().history, best_row=1)
    qtmodeltester.check(model)
    titles = [
        model.headerData(column, Qt.Orientation.Horizontal) for column in range(model.columnCount())
    ]
    assert titles == ["Epoch", "Training loss", "Exact match", "F1"]
    cells = [model.index(1, column).data() for column in range(model.columnCount())]
    assert cells == ["2", "0.412", "66.7 %", "71.2 %"]



def test_the_curve_chart_writes_a_score_as_the_table_does(qtbot):
    """The legend and the right axis say "100.0 %" beside a table that says so, not "1"."""
    from kbert_gui.fine_tuning.training_curve_chart import TrainingCurveChart

    chart = TrainingCurveChart()
    qtbot.addWidget(chart)
    chart.resize(800, 300)
    chart.add_loss_point(1, 0.7)
    chart.add_metric_point(4, 0.875)
    chart.set_names("training loss", "evaluation accuracy", True, "accuracy", False)
    assert chart.legend_entries()[1].text == "evaluation accuracy: 87.5 %"
    chart.add_metric_point(8, 1.0)
    assert chart.legend_entries()[1].shown == "evaluation accuracy: 100.0 %"  # whole
    assert chart.tick_labels()[1][-1] == "100 %"
    # SQuAD's exact match is a percentage already; a loss-like metric stays a number.
    chart.clear()
    chart.add_metric_point(4, 66.666667)
    chart.set_names("training loss", "evaluation exact match", True, "exact_match", True)
    assert chart.legend_entries()[1].text == "evaluation exact match: 66.7 %"
    assert chart.tick_labels()[1][-1] == "100 %"
    chart.set_names("training loss", "evaluation MCC", True, "matthews_corrcoef", False)
    assert chart.legend_entries()[1].text == "evaluation MCC: 66.67"
