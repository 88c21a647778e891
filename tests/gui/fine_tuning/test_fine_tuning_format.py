"""The fine-tuning tab's lines and rows, from kbert's results (no Qt)."""

import pathlib

from fine_tuning_helpers import DATA

from kbert.inference import AnswerResult
from kbert.inference import AnswerSpan
from kbert.inference import Choice
from kbert.inference import Classification
from kbert.inference import EntitySpan
from kbert.inference import FillMaskResult
from kbert.inference import MaskFill
from kbert.inference import MaskPrediction
from kbert.pretraining import PretrainingResult
from kbert.finetuning import FineTuningResult

from kbert_gui.fine_tuning.fine_tuning_format import cancelled_line
from kbert_gui.fine_tuning.fine_tuning_format import describe_prediction
from kbert_gui.fine_tuning.fine_tuning_format import epoch_line
from kbert_gui.fine_tuning.fine_tuning_format import error_lines
from kbert_gui.fine_tuning.fine_tuning_format import eta_text
from kbert_gui.fine_tuning.fine_tuning_format import log_line
from kbert_gui.fine_tuning.fine_tuning_format import preview_problems
from kbert_gui.fine_tuning.fine_tuning_format import preview_summary
from kbert_gui.fine_tuning.fine_tuning_format import probe_line
from kbert_gui.fine_tuning.fine_tuning_format import probe_suggestion
from kbert_gui.fine_tuning.fine_tuning_format import result_summary
from kbert_gui.fine_tuning.fine_tuning_format import result_table
from kbert_gui.fine_tuning.fine_tuning_format import start_line
from kbert_gui.fine_tuning.fine_tuning_format import status_heading
from kbert_gui.fine_tuning.training_data_preview import TrainingDataPreview

COLUMNS = {"text_column": "sentence", "pair_column": None, "label_column": "label"}


def _fine_tuning_result(metric="accuracy", status="completed"):
    return FineTuningResult(
        status=status,
        metric=metric,
        best_metric=0.875 if metric else None,
        best_epoch=2,
        final_metrics={},
        preset_path=pathlib.Path("run/model"),
        checkpoint_path=pathlib.Path("run/training_checkpoint.h5"),
        history=[
            {"epoch": 1, "loss": 0.7, "accuracy": 0.5},
            {"epoch": 2, "loss": 0.4, "accuracy": 0.875},
            {"epoch": 3, "loss": 0.3, "accuracy": 0.75},
        ],
        global_step=12,
    )


def test_probe_predictions_in_one_line():
    classification = Classification("pos", 0.61, {"neg": 0.3, "pos": 0.61, "odd": 0.05, "x": 0.04})
    assert describe_prediction(classification) == "pos 61.0 % · neg 30.0 % · odd 5.0 %"
    answers = AnswerResult(
        "who?",
        "Alice is the king .",
        (
            AnswerSpan("Alice", 0, 5, 3.0, 0.75, 0.8, 0.9, 0),
            AnswerSpan("king", 13, 17, 1.0, 0.25, 0.3, 0.4, 0),
        ),
        -1.0,
        False,
    )
    assert describe_prediction(answers) == "“Alice” 75.0 % · “king” 25.0 %"
    assert describe_prediction(AnswerResult("who?", "", (), None, True)) == "(no answer)"
    masks = FillMaskResult(
        "the [MASK] sat",
        (
            MaskFill(
                2,
                4,
                10,
                tuple(
                    MaskPrediction(token, index, probability, "")
                    for index, (token, probability) in enumerate(
                        [("cat", 0.5), ("dog", 0.25), ("##s", 0.125), ("man", 0.0625)]
                    )
                ),
            ),
        ),
    )
    assert describe_prediction(masks) == "[MASK] → cat 50.0 %, dog 25.0 %, ##s 12.5 %"
    entities = [EntitySpan("PER", 0, 5, "Alice", 0.9), EntitySpan("LOC", 19, 23, "Rome", 0.625)]
    assert describe_prediction(entities) == "Alice [PER 90.0 %], Rome [LOC 62.5 %]"
    assert describe_prediction([]) == "(no entities)"
    choice = Choice(2, "and left.", 0.5, (0.2, 0.05, 0.5, 0.25), ("a", "b", "and left.", "d"))
    assert describe_prediction(choice) == "2: “and left.” 50% · 3: “d” 25% · 0: “a” 20%"


def test_probe_list_lines():
    classification = Classification("pos", 0.75, {"pos": 0.75, "neg": 0.25})
    assert probe_line(2, classification, None) == (
        "Epoch 2: pos 75.0 % · neg 25.0 %",
        "Epoch 2\npos 75.0 % · neg 25.0 %",
    )
    assert probe_line(None, None, "ValueError: empty text") == (
        "Saved model: ValueError: empty text",
        "Saved model\nValueError: empty text",
    )


def test_log_and_status_lines():
    assert log_line("Read 32 examples", "INFO") == "Read 32 examples"
    assert log_line("Slow step", "WARNING") == "WARNING: Slow step"
    assert start_line("Text classification", "/runs/a", resume=False) == (
        "— Starting text classification in /runs/a"
    )
    assert start_line("Question answering (SQuAD)", "/runs/a", resume=True) == (
        "— Resuming question answering (squad) in /runs/a"
    )
    assert eta_text(65, 0.5) == "ETA 1:05 · 500 ms/step"
    assert epoch_line(3, {"epoch": 3, "loss": 0.123456, "accuracy": 0.5, "steps": 4}) == (
        "Epoch 3: training loss 0.123, accuracy 50.0 %"
    )
    assert cancelled_line(7) == "Cancelled after step 7"
    assert cancelled_line(0) == cancelled_line(None) == "Cancelled"
    assert status_heading("completed") == "Completed"
    assert status_heading("stopped_early") == "Stopped early"
    assert status_heading("cancelled") == "cancelled"


def test_a_fine_tuning_result_as_table_and_summary():
    result = _fine_tuning_result()
    rows, best_row, reason = result_table(result)
    assert rows == result.history and rows[0] is not result.history[0]
    assert best_row == 1
    assert reason == "Best accuracy: this epoch's model was saved."
    assert result_summary(result) == "best accuracy 87.5 % at epoch 2"

    without_evaluation = _fine_tuning_result(metric=None)
    assert result_table(without_evaluation)[1:] == (1, "Last epoch: saved.")
    assert result_summary(without_evaluation) == (
        "3 epochs (no evaluation data: the last epoch is saved)"
    )


def test_a_pretraining_result_as_table_and_summary():
    result = PretrainingResult(
        status="completed",
        global_step=5,
        train_metrics={"loss": 2.5, "mlm_accuracy": 0.25},
        eval_metrics=None,
        preset_path=pathlib.Path("run/model"),
        checkpoint_path=pathlib.Path("run/training_checkpoint.h5"),
    )
    assert result_table(result) == (
        [{"data": "training", "loss": 2.5, "mlm_accuracy": 0.25}],
        None,
        "",
    )
    assert result_summary(result) == "5 steps"
    evaluated = PretrainingResult(**{**vars(result), "eval_metrics": {"loss": 3.0}})
    assert result_table(evaluated)[0][1] == {"data": "evaluation", "loss": 3.0}


def test_preview_summary_and_problems(tmp_path):
    train = TrainingDataPreview.load(DATA / "sample.csv", "classification", COLUMNS)
    assert train.ok
    bad = tmp_path / "bad.csv"
    bad.write_text("sentence,label\nfine,1\nno label,\n", encoding="utf-8")
    rejected = TrainingDataPreview.load(bad, "classification", COLUMNS, max_rows=0)
    assert rejected.error == f"{bad}:3: empty label in column 'label'."

    assert preview_summary(train, None) == f"Training: {train.summary}"
    assert preview_summary(train, rejected) == (
        f"Training: {train.summary}\n"
        "Evaluation: the reader rejects the file (see the message above)"
    )
    assert preview_problems(train, None) == [] and error_lines(train) == {}
    assert preview_problems(rejected, rejected) == [rejected.error]
    assert error_lines(rejected) == {3: rejected.error}


def test_the_probe_is_suggested_by_the_first_example(tmp_path):
    table = TrainingDataPreview.load(DATA / "sample.csv", "classification", COLUMNS)
    assert probe_suggestion(table, COLUMNS) == {"text": table.rows[0][0], "pair": None}
    by_position = {"text_column": 1, "pair_column": 0, "label_column": 1}
    assert probe_suggestion(table, by_position) == {
        "text": table.rows[0][1],
        "pair": table.rows[0][0],
    }
    assert probe_suggestion(table, None) == {"text": None, "pair": None}

    conll = TrainingDataPreview.load(DATA / "sample.conll", "token-classification")
    assert probe_suggestion(conll, None) == {"text": "EU rejects German call ."}
    squad = TrainingDataPreview.load(DATA / "sample_squad_v2.json", "qa")
    assert probe_suggestion(squad, None) == {
        "question": "What is the capital of France?",
        "context": "Paris is the capital of France. The Eiffel Tower is in Paris.",
    }

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Hi there\nthe cat sat on the mat\n", encoding="utf-8")
    text = TrainingDataPreview.load(corpus, "masked-lm")
    assert probe_suggestion(text, None) == {"text": "the cat sat [MASK] the mat"}
    corpus.write_text("Hi there\n", encoding="utf-8")
    assert probe_suggestion(TrainingDataPreview.load(corpus, "masked-lm"), None) is None

    # A file the reader rejects at its first line shows raw lines, not examples.
    bad = tmp_path / "bad.conll"
    bad.write_text("EU\n", encoding="utf-8")
    rejected = TrainingDataPreview.load(bad, "token-classification")
    assert rejected.error and probe_suggestion(rejected, None) is None
