"""The fine-tuning tab's setup: the hyperparameter form under the wheel, the label
column, empty files, every problem of a table or CoNLL file, and files that survive a
task switch."""

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtCore import QPointF
from PySide6.QtCore import Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication
from fine_tuning_data import classification_examples
from fine_tuning_helpers import DATA
from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)
from fine_tuning_helpers import write_csv

from kbert_gui.fine_tuning.column_mapping_form import CHOOSE_LABEL
from kbert_gui.fine_tuning.table_problems import MAX_PROBLEMS

PREVIEW_TIMEOUT_MS = 20_000


def _wheel(widget, notches=-1):
    """Turns the mouse wheel over the middle of `widget` (negative: towards the user);
    returns whether the widget took the event (an ignored one goes to its parent)."""
    center = QPointF(widget.rect().center())
    event = QWheelEvent(
        center,
        QPointF(widget.mapToGlobal(center.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)
    return event.isAccepted()


def _wait_for_preview(qtbot, tab, path):
    qtbot.waitUntil(
        lambda: tab.preview is not None and tab.preview.path == str(path), timeout=PREVIEW_TIMEOUT_MS
    )


def _write_table(path, header, rows):
    path.write_text("\n".join([",".join(header)] + [",".join(row) for row in rows]) + "\n")
    return path


def test_the_wheel_changes_a_field_only_once_it_is_focused(tab, qtbot):
    tab.show()
    qtbot.waitExposed(tab)
    tab.train_file_edit.setFocus()
    qtbot.waitUntil(tab.train_file_edit.hasFocus)
    form = tab.hyperparameters
    for name in ("warmup_ratio", "learning_rate", "epochs", "precision"):
        before = form.values()[name]
        # Left to the scrolling form around it: the value stays.
        assert not _wheel(form.widget(name)), name
        assert form.values()[name] == before, name
        assert form.widget(name).focusPolicy() == Qt.FocusPolicy.StrongFocus
    warmup = form.widget("warmup_ratio")
    warmup.setFocus()
    qtbot.waitUntil(warmup.hasFocus)
    before = warmup.value()
    assert _wheel(warmup, notches=1)
    assert warmup.value() == pytest.approx(before + warmup.singleStep())


def test_the_label_column_is_chosen_explicitly_and_one_class_is_refused(tab, qtbot, tmp_path):
    # No column is named like a label; "comment" holds the same word everywhere.
    path = _write_table(
        tmp_path / "comments.csv",
        ("text", "comment"),
        [(example.text, "x") for example in classification_examples(12, seed=5)],
    )
    tab.set_training_file(path)
    qtbot.waitUntil(lambda: tab.error_banner.message == CHOOSE_LABEL, timeout=PREVIEW_TIMEOUT_MS)
    assert tab.column_form.mapping()["label_column"] is None
    assert tab.column_form.label_box.currentIndex() == -1
    assert tab.preview_model.rowCount() == 12  # the rows still show, to choose from
    tab.start()
    assert tab.error_banner.message == CHOOSE_LABEL and tab.worker is None

    tab.column_form.label_box.setCurrentText("comment")
    qtbot.waitUntil(lambda: "single label" in tab.error_banner.message, timeout=PREVIEW_TIMEOUT_MS)
    assert tab.error_banner.message == (
        f"{path} has a single label, 'x', in column 'comment': a classifier needs at least two "
        "classes. Choose the column that holds the labels, or add examples of the other classes."
    )
    tab.start()
    assert tab.error_banner.message.startswith("Fix the training data first: ")
    assert tab.worker is None


def test_an_empty_file_is_called_empty(tab, qtbot, tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    tab.set_training_file(path)
    _wait_for_preview(qtbot, tab, path)
    assert tab.error_banner.message == f"{path}: the file is empty: it has no columns and no rows."
    assert "rows shown" not in tab.preview_summary.text()
    tab.start()
    assert "the file is empty" in tab.error_banner.message
    assert "columns are not known" not in tab.error_banner.message


def test_every_problem_of_a_table_is_listed_up_to_a_limit(tab, qtbot, tmp_path):
    bad_lines = (4, 7, 9)
    path = write_csv(tmp_path / "bad.csv", classification_examples(10, seed=4))
    lines = path.read_text().splitlines()
    for line in bad_lines:
        lines[line - 1] = lines[line - 1].rsplit(",", 1)[0] + ","  # an empty label
    lines.insert(10, '"a ""quoted"" text",pos,extra')  # line 11: a field too many
    path.write_text("\n".join(lines) + "\n")
    tab.set_training_file(path)
    qtbot.waitUntil(lambda: ":11:" in tab.error_banner.message, timeout=PREVIEW_TIMEOUT_MS)
    messages = tab.error_banner.message.splitlines()
    assert messages == [
        f"{path}:4: empty label in column 'label'.",
        f"{path}:7: empty label in column 'label'.",
        f"{path}:9: empty label in column 'label'.",
        f"{path}:11: the row has 3 fields but the header on line 1 has 2.",
    ]
    model = tab.preview_model
    assert [model.row_error(row) for row in model.error_rows()] == messages
    assert "all 4 problems are listed above" in tab.preview_summary.text()

    # A file with more problems lists the first MAX_PROBLEMS.
    rows = [(example.text, "") for example in classification_examples(30, seed=6)]
    many = _write_table(tmp_path / "many.csv", ("text", "label"), rows)
    tab.set_training_file(many)
    qtbot.waitUntil(lambda: str(many) in tab.error_banner.message, timeout=PREVIEW_TIMEOUT_MS)
    assert len(tab.error_banner.message.splitlines()) == MAX_PROBLEMS
    assert f"the first {MAX_PROBLEMS} problems" in tab.preview_summary.text()


def test_every_problem_of_a_conll_file_is_listed(tab, qtbot, tmp_path):
    path = tmp_path / "train.conll"
    path.write_text("EU B-ORG\nrejects PER\n\nPeter B-PER\n\nBlackburn\n", encoding="utf-8")
    tab.set_task("token-classification")
    tab.set_training_file(path)
    qtbot.waitUntil(lambda: ":6:" in tab.error_banner.message, timeout=PREVIEW_TIMEOUT_MS)
    malformed = "(expected 'O' or B-, I-, E-, S- followed by an entity type, e.g. 'B-PER')."
    messages = [f"{path}:2: malformed tag 'PER' {malformed}", f"{path}:6: malformed tag 'Blackburn' {malformed}"]
    assert tab.error_banner.message.splitlines() == messages
    model = tab.preview_model
    assert [model.row_error(row) for row in model.error_rows()] == messages
    assert "all 2 problems are listed above" in tab.preview_summary.text()


def test_switching_the_task_keeps_each_kinds_files(tab, qtbot, tmp_path, data):
    tab.set_task("classification")
    tab.set_training_file(data["train"])
    tab.set_evaluation_file(data["evaluation"])
    tab.set_task("qa")
    assert tab.train_file_edit.text() == "" and tab.eval_file_edit.text() == ""
    tab.set_training_file(DATA / "sample_squad_v2.json")
    tab.set_task("pair-classification")  # a table again: the tables come back
    assert tab.train_file_edit.text() == str(data["train"])
    assert tab.eval_file_edit.text() == str(data["evaluation"])
    tab.set_task("qa")
    assert tab.train_file_edit.text() == str(DATA / "sample_squad_v2.json")
    _wait_for_preview(qtbot, tab, DATA / "sample_squad_v2.json")
    assert tab.preview.kind == "squad"
