"""The fine-tuning form's previews of CoNLL, SQuAD and multiple-choice files list every
problem the reader finds, each on its line where it has one, without Qt."""

import json

from kbert_gui.fine_tuning.fine_tuning_format import error_lines
from kbert_gui.fine_tuning.fine_tuning_format import preview_summary
from kbert_gui.fine_tuning.table_problems import MAX_PROBLEMS
from kbert_gui.fine_tuning.training_data_preview import TrainingDataPreview


def test_a_conll_file_with_two_bad_lines_lists_both_and_shows_their_lines(tmp_path):
    path = tmp_path / "train.conll"
    sentences = [f"word{index} O\n\n" for index in range(8)]
    sentences[1] = "EU B-ORG\nrejects PER\n\n"  # line 4
    sentences[6] = "bad\n\n"  # line 14, past the rows shown
    path.write_text("".join(sentences), encoding="utf-8")
    preview = TrainingDataPreview.load(path, "token-classification", max_rows=3)
    malformed = "(expected 'O' or B-, I-, E-, S- followed by an entity type, e.g. 'B-PER')."
    assert preview.problems == (
        (4, f"{path}:4: malformed tag 'PER' {malformed}"),
        (14, f"{path}:14: malformed tag 'bad' {malformed}"),
    )
    assert (preview.error_line, preview.error) == preview.problems[0]
    assert preview.lines == (1, 2, 3, 4, 14)  # the first lines, then the rejected ones
    assert error_lines(preview) == dict(preview.problems)
    assert "all 2 problems are listed above" in preview_summary(preview, None)


def test_a_squad_file_with_two_bad_questions_lists_both(tmp_path):
    context = "Paris is in France."
    questions = [
        {"id": "q1", "question": "Where?", "answers": [{"text": "Paris", "answer_start": 0}]},
        {"id": "q2", "question": "Where?", "answers": [{"text": "Rome", "answer_start": 0}]},
        {"id": "q3", "question": "", "answers": [], "is_impossible": True},
        {"id": "q4", "question": "What?", "answers": []},
    ]
    document = {"data": [{"title": "t", "paragraphs": [{"context": context, "qas": questions}]}]}
    path = tmp_path / "train.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    preview = TrainingDataPreview.load(path, "qa")
    where = "data[0].paragraphs[0].qas"
    assert preview.problems == (
        (None, f"{path}: question 'q2' at {where}[1], answers[0]: answer 'Rome' does not occur in the context."),
        (None, f"{path}: question 'q4' at {where}[3]: the question has no answers and is not marked is_impossible."),
    )
    assert not preview.ok and error_lines(preview) == {}


def test_a_multiple_choice_file_lists_each_bad_row_up_to_the_limit(tmp_path):
    header = "sent1,sent2,ending0,ending1,ending2,ending3,label"
    rows = [f"He runs {index}.,The man,stops.,falls.,waves.,sits.,{index % 4}" for index in range(30)]
    for index in range(2, 30, 2):
        rows[index] = rows[index].rsplit(",", 1)[0] + ",9"
    path = tmp_path / "train.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    preview = TrainingDataPreview.load(path, "multiple-choice")
    assert [line for line, _ in preview.problems] == list(range(4, 4 + 2 * MAX_PROBLEMS, 2))
    assert all("label in column 'label' 9 is out of range" in message for _, message in preview.problems)
    assert f"the first {MAX_PROBLEMS} problems are listed above" in preview_summary(preview, None)


def test_a_file_level_problem_is_the_only_one(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("sent1,ending0,ending1,label\nHe runs.,stops.,,7\n", encoding="utf-8")
    preview = TrainingDataPreview.load(path, "multiple-choice")
    assert preview.problems == (
        (1, f"{path}:1: column 'sent2' is missing; the columns are ['sent1', 'ending0', 'ending1', 'label']."),
    )
    empty = tmp_path / "empty.conll"
    empty.write_text("\n-DOCSTART- O\n\n", encoding="utf-8")
    assert TrainingDataPreview.load(empty, "token-classification").problems == (
        (None, f"{empty}: no sentences found."),
    )
    wrong = tmp_path / "train.txt"
    wrong.write_text("a,b\n", encoding="utf-8")
    (problem,) = TrainingDataPreview.load(wrong, "multiple-choice").problems
    assert problem[0] is None and "cannot tell the format from the extension '.txt'" in problem[1]


def test_a_text_file_that_is_not_utf8_shows_its_bad_line(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"one\ntwo\nthr\xffee\nfour\n")
    preview = TrainingDataPreview.load(path, "masked-lm", max_rows=1)
    assert preview.error_line == 3 and preview.lines == (1, 3)
    assert preview.error == f"{path}:3: the file is not valid UTF-8 (invalid start byte)."
