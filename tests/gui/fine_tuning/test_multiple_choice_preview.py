"""The fine-tuning form's preview of multiple-choice files (SWAG CSV, JSON Lines) and its
column mapping, without Qt."""

import csv
import json

from fine_tuning_data import swag_rows
from fine_tuning_data import write_swag

from kbert_gui.fine_tuning.fine_tuning_format import probe_suggestion
from kbert_gui.fine_tuning.training_data_preview import TrainingDataPreview


def test_a_swag_file_previews_its_contexts_endings_and_labels(tmp_path):
    rows = swag_rows(5, seed=0)
    preview = TrainingDataPreview.load(write_swag(tmp_path / "train.csv", rows), "multiple-choice")
    assert preview.ok and preview.kind == "choices"
    assert preview.headers == ("context", "ending 0", "ending 1", "ending 2", "ending 3", "label")
    context, start, endings, label = rows[0][3], rows[0][4], rows[0][6:10], rows[0][10]
    whole_endings = [f"{start} {ending}" for ending in endings]
    assert preview.rows[0] == (context, *whole_endings, label)
    assert preview.lines[:2] == (2, 3)
    assert preview.summary == "5 examples, 4 endings each"
    assert probe_suggestion(preview, None) == {"context": context, "endings": whole_endings}


def test_a_bad_row_is_the_readers_error_on_its_line(tmp_path):
    rows = swag_rows(3, seed=0)
    rows[1] = rows[1][:-1] + ("7",)
    preview = TrainingDataPreview.load(write_swag(tmp_path / "train.csv", rows), "multiple-choice")
    assert not preview.ok
    assert preview.error_line == 3
    assert "label in column 'label' 7 is out of range" in preview.error


def _renamed(path, rows):
    """`rows` under other names: "premise" for the context, "answer" for the label, and
    whole endings (no start column)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["premise", "ending0", "ending1", "ending2", "ending3", "answer"])
        writer.writerows((row[3], *(f"{row[4]} {e}" for e in row[6:10]), row[10]) for row in rows)
    return str(path)


def test_a_file_with_other_column_names_previews_once_they_are_mapped(tmp_path):
    rows = swag_rows(3, seed=0)
    path = _renamed(tmp_path / "train.csv", rows)
    unmapped = TrainingDataPreview.load(path, "multiple-choice")
    assert not unmapped.ok and "column 'sent1' is missing" in unmapped.error
    assert unmapped.file_columns == ("premise", "answer")  # offered for mapping
    columns = {"context_column": "premise", "start_column": "", "label_column": "answer"}
    preview = TrainingDataPreview.load(path, "multiple-choice", columns)
    assert preview.ok and preview.summary == "3 examples, 4 endings each"
    whole = tuple(f"{rows[0][4]} {ending}" for ending in rows[0][6:10])
    assert preview.rows[0] == (rows[0][3], *whole, rows[0][10])
    # What the fine-tuning run reads is what the preview shows.
    from kbert.finetuning import make_recipe

    examples = make_recipe("multiple-choice", **columns).read(path)
    assert [example.label for example in examples] == [int(row[10]) for row in rows]
    assert examples[0].endings == preview.rows[0][1:-1]


def test_json_lines_offer_their_label_field(tmp_path):
    path = tmp_path / "train.jsonl"
    records = [{"context": "a cat", "endings": ["sat", "ran"], "gold": index % 2, "id": index}
               for index in range(3)]
    path.write_text("\n".join(json.dumps(record) for record in records) + "\n", encoding="utf-8")
    preview = TrainingDataPreview.load(path, "multiple-choice", {"label_column": "gold"})
    assert preview.ok and preview.file_columns == ("gold", "id")
    assert [row[-1] for row in preview.rows] == ["0", "1", "0"]
