"""The fine-tuning form for multiple choice: its column mapping of a SWAG-like CSV whose
columns go by other names, and its probe of a context with its endings."""

import csv

from fine_tuning_data import swag_rows
from fine_tuning_helpers import data  # noqa: F401 (fixture)
from fine_tuning_helpers import tab  # noqa: F401 (fixture)

from kbert_gui.fine_tuning.choice_column_form import NO_START

TIMEOUT_MS = 20_000


def test_renamed_columns_are_mapped_and_the_probe_is_a_context_with_its_endings(
    tab, qtbot, tmp_path  # noqa: F811
):
    rows = swag_rows(6, seed=0)
    path = tmp_path / "train.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["premise", "sent2", "ending0", "ending1", "ending2", "answer"])
        writer.writerows((row[3], row[4], *row[6:9], str(int(row[10]) % 3)) for row in rows)
    tab.set_task("multiple-choice")
    form = tab.choice_form
    assert not form.isHidden() and tab.column_form.isHidden()
    tab.set_training_file(path)
    # The guesses: "premise" is no usual context name, so the first column is taken
    # (right here), sent2 is the start and "answer" the label.
    qtbot.waitUntil(lambda: tab.preview is not None and tab.preview.ok, timeout=TIMEOUT_MS)
    assert tab.column_mapping("choices") == {
        "context_column": "premise", "start_column": "sent2", "label_column": "answer"
    }
    assert tab.preview.summary == "6 examples, 3 endings each"
    assert tab.preview.rows[0][1] == f"{rows[0][4]} {rows[0][6]}"
    probe = tab.probe_input.probe()
    assert probe == {"context": rows[0][3], "endings": list(tab.preview.rows[0][1:-1])}
    assert not tab.probe_input.endings_edit.isHidden() and tab.probe_input.text_edit.isHidden()

    # Whole endings: no start column; the preview follows the mapping.
    form.start_box.setCurrentIndex(form.start_box.findText(NO_START))
    qtbot.waitUntil(
        lambda: tab.preview.ok and tab.preview.rows[0][1] == rows[0][6], timeout=TIMEOUT_MS
    )
    assert tab.column_mapping("choices")["start_column"] == ""
    # A label column that holds text is the reader's error, on the first row's line.
    form.label_box.setCurrentIndex(form.label_box.findText("sent2"))
    qtbot.waitUntil(lambda: not tab.preview.ok, timeout=TIMEOUT_MS)
    assert tab.preview.error_line == 2 and "label in column 'sent2'" in tab.preview.error

    # The probe needs two endings.
    tab.probe_input.set_values(endings=["only one"])
    assert tab.probe_input.probe() is None
    tab.probe_input.set_values(endings=["and left.", "a fish."])
    assert tab.probe_input.probe()["endings"] == ["and left.", "a fish."]
