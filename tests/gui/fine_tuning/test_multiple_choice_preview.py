"""The fine-tuning form's preview of multiple-choice files (SWAG CSV), without Qt."""

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
