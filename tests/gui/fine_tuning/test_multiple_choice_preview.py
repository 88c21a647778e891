"""The fine-tuning form's preview of multiple-choice files (SWAG CSV), without Qt."""

import csv

from fine_tuning_data import SWAG_COLUMNS
from fine_tuning_data import swag_rows

from kbert_gui.fine_tuning.fine_tuning_format import probe_suggestion
from kbert_gui.fine_tuning.training_data_preview import TrainingDataPreview


def write_swag(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(SWAG_COLUMNS)
        writer.writerows(rows)
    return path


def test_a_swag_file_previews_its_contexts_endings_and_labels(tmp_path):
    rows = swag_rows(5, seed=0)
    preview = TrainingDataPreview.load(write_swag(tmp_path / "train.csv", rows), "multiple-choice")
    assert preview.ok and preview.kind == "choices"
    assert preview.headers == ("context", "endings", "label")
    context, start, endings, label = rows[0][3], rows[0][4], rows[0][6:10], rows[0][10]
    assert preview.rows[0] == (context, " | ".join(f"{start} {e}" for e in endings), label)
    assert preview.lines[:2] == (2, 3)
    assert preview.summary == "5 examples, 4 endings each"
    assert probe_suggestion(preview, None) == {"context": context}


def test_a_bad_row_is_the_readers_error_on_its_line(tmp_path):
    rows = swag_rows(3, seed=0)
    rows[1] = rows[1][:-1] + ("7",)
    preview = TrainingDataPreview.load(write_swag(tmp_path / "train.csv", rows), "multiple-choice")
    assert not preview.ok
    assert preview.error_line == 3
    assert "label in column 'label' 7 is out of range" in preview.error
