"""The readers' `errors="collect"`: the good examples and every problem, in file order.

Each reader gets a file with three bad records in different places (the first record,
one in the middle, the last) and must return the others as examples and one problem per
bad record, on the record's own line, worded as `errors="raise"` raises the first.
"""

import json

import pytest

from kbert.data import ReadError
from kbert.data import ReadProblem
from kbert.data import ReadResult
from kbert.data import read_classification
from kbert.data import read_conll
from kbert.data import read_multiple_choice
from kbert.data import read_squad
from kbert.data.problem_collector import MAX_PROBLEMS


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _lines(result):
    return [problem.line for problem in result.problems]


def _first_raised(read, path):
    with pytest.raises(ValueError) as raised:
        read(path)
    return str(raised.value)


def _check_collected(read, path, bad_lines, good_lines):
    """`read(path, errors=...)` collects one problem per bad line, keeps the good records,
    and raises the first problem, worded the same, by default."""
    result = read(path, errors="collect")
    assert isinstance(result, ReadResult) and not result.ok
    assert _lines(result) == bad_lines
    assert [example.line for example in result.examples] == good_lines
    assert all(problem.file == str(path) for problem in result.problems)
    assert all(problem.message.startswith(f"{path}:{problem.line}: ") for problem in result.problems)
    assert _first_raised(read, path) == result.problems[0].message
    return result


# Classification tables -------------------------------------------------------------------


def test_a_csv_table_lists_each_bad_record_and_keeps_the_rest(tmp_path):
    path = _write(
        tmp_path,
        "train.csv",
        'text,label\n,pos\ngood one,neg\n"a ""broken"" quote"x,pos\n\n"spans\ntwo lines",pos\n'
        "fine,neg\nthree,fields,here\n",
    )
    result = _check_collected(read_classification, path, [2, 4, 9], [3, 6, 8])
    assert [problem.message for problem in result.problems] == [
        f"{path}:2: empty text in column 'text'.",
        f"{path}:4: malformed record (',' expected after '\"').",
        f"{path}:9: the row has 3 fields but the header on line 1 has 2.",
    ]
    assert result.examples[1].text == "spans\ntwo lines"


def test_json_lines_list_invalid_json_missing_fields_and_bad_values(tmp_path):
    records = [
        '{"text": "a", "label": 1}',
        "{not json",
        '{"text": "b", "label": 0}',
        '{"text": "c"}',
        '{"text": "d", "label": 1}',
        '{"text": ["e"], "label": 0}',
    ]
    path = _write(tmp_path, "train.jsonl", "\n".join(records) + "\n")
    result = _check_collected(read_classification, path, [2, 4, 6], [1, 3, 5])
    assert [example.label for example in result.examples] == ["1", "0", "1"]


def test_a_table_whose_every_record_is_bad_lists_them_not_no_records(tmp_path):
    path = _write(tmp_path, "train.csv", "text,label\na,\nb,\n")
    result = read_classification(path, errors="collect")
    assert result.examples == () and _lines(result) == [2, 3]


def test_a_problem_of_the_file_is_the_only_problem(tmp_path):
    missing_column = _write(tmp_path, "train.csv", "sentence,label\n,pos\na,neg\n")
    result = read_classification(missing_column, errors="collect")
    assert result.examples == ()
    assert result.problems == (
        ReadProblem(
            str(missing_column),
            1,
            f"{missing_column}:1: text_column='text' is not a column; the columns are ['sentence', 'label'].",
        ),
    )
    # The bad record before it is not listed: the file has to be fixed first.
    not_utf8 = _write(tmp_path, "latin.csv", b"text,label\n,pos\ncaf\xe9,neg\nok,pos\n")
    result = read_classification(not_utf8, errors="collect")
    assert result.examples == () and _lines(result) == [3]
    assert result.problems[0].message == f"{not_utf8}:3: the file is not valid UTF-8 (invalid continuation byte)."
    empty = _write(tmp_path, "empty.csv", "\n\n")
    assert read_classification(empty, errors="collect").problems == (
        ReadProblem(str(empty), None, f"{empty}: no records found."),
    )
    absent = tmp_path / "absent.csv"
    (problem,) = read_classification(absent, errors="collect").problems
    assert problem.line is None and str(absent) in problem.message


def test_the_list_is_capped_with_a_count_of_the_rest(tmp_path):
    rows = "".join(f"text {index},\n" for index in range(MAX_PROBLEMS + 7))
    path = _write(tmp_path, "train.csv", "text,label\nfirst,pos\n" + rows + "last,neg\n")
    result = read_classification(path, errors="collect")
    assert len(result.problems) == MAX_PROBLEMS + 1
    assert _lines(result)[:MAX_PROBLEMS] == list(range(3, MAX_PROBLEMS + 3))
    assert result.problems[-1] == ReadProblem(
        str(path), None, f"{path}: 7 more problems are not listed (a reader lists at most {MAX_PROBLEMS})."
    )
    assert [example.text for example in result.examples] == ["first", "last"]


@pytest.mark.parametrize(
    "read", [read_classification, read_conll, read_squad, read_multiple_choice], ids=lambda read: read.__name__
)
@pytest.mark.parametrize("errors", ["ignore", "Collect", None])
def test_an_unknown_errors_value_is_named(tmp_path, read, errors):
    with pytest.raises(ValueError, match=rf"`errors` must be 'raise' or 'collect'. Received: errors={errors!r}"):
        read(tmp_path / "train.csv", errors=errors)


def test_bad_arguments_still_raise_when_collecting(tmp_path):
    path = _write(tmp_path, "train.csv", "text,label\na,pos\n")
    with pytest.raises(ValueError, match="`format` must be one of"):
        read_classification(path, format="xml", errors="collect")
    with pytest.raises(ValueError, match="`text_column` is required"):
        read_classification(path, text_column=None, errors="collect")


# CoNLL ---------------------------------------------------------------------------------


def test_conll_lists_each_bad_line_and_leaves_its_sentence_out(tmp_path):
    path = _write(
        tmp_path,
        "train.conll",
        "-DOCSTART- -X- O\n\nEU B-ORG\nrejects PER\n\nPeter B-PER\nBlackburn I-PER\n\n"
        "Paris B-LOC\n\n   \nit\nis O\n\nlast O\nsentence 7\n",
    )
    result = _check_collected(read_conll, path, [4, 12, 16], [6, 9])
    assert [example.tokens for example in result.examples] == [["Peter", "Blackburn"], ["Paris"]]
    assert "malformed tag 'PER'" in result.problems[0].message


def test_conll_lists_every_bad_line_of_one_sentence(tmp_path):
    path = _write(tmp_path, "train.conll", "a X\nb O\nc Y\n\nd O\n")
    result = read_conll(path, token_column=0, tag_column=1, errors="collect")
    assert _lines(result) == [1, 3] and [example.tokens for example in result.examples] == [["d"]]


def test_conll_without_problems_returns_every_sentence_and_none(tmp_path):
    path = _write(tmp_path, "train.conll", "a O\n\nb B-X\n")
    result = read_conll(path, errors="collect")
    assert result.ok and list(result.examples) == read_conll(path)


# SQuAD ---------------------------------------------------------------------------------


def _question(question_id, answer="Paris", start=0):
    return {"id": question_id, "question": "Where?", "answers": [{"text": answer, "answer_start": start}]}


def test_squad_lists_each_bad_question_by_its_json_path(tmp_path):
    context = "Paris is in France."
    document = {
        "data": [
            {
                "title": "one",
                "paragraphs": [
                    {"context": context, "qas": [_question("q1", "Rome"), _question("q2")]},
                    {"qas": [_question("q3")]},
                ],
            },
            {
                "title": "two",
                "paragraphs": [{"context": context, "qas": [_question("q4"), _question("q2", "France", 12)]}],
            },
        ]
    }
    path = _write(tmp_path, "train.json", json.dumps(document))
    result = read_squad(path, errors="collect")
    assert [example.id for example in result.examples] == ["q2", "q4"]
    assert _lines(result) == [None, None, None]
    assert [problem.message for problem in result.problems] == [
        f"{path}: question 'q1' at data[0].paragraphs[0].qas[0], answers[0]: answer 'Rome' does not "
        "occur in the context.",
        f"{path}: data[0].paragraphs[1]: no 'context' field; the fields are ['qas'].",
        f"{path}: question 'q2' at data[1].paragraphs[0].qas[1]: the id 'q2' was used before.",
    ]
    assert _first_raised(read_squad, path) == result.problems[0].message


def test_squad_without_its_data_list_is_the_only_problem(tmp_path):
    path = _write(tmp_path, "train.json", json.dumps({"version": "v2.0"}))
    result = read_squad(path, errors="collect")
    assert result.examples == () and [str(problem) for problem in result.problems] == [
        _first_raised(read_squad, path)
    ]


# Multiple choice -----------------------------------------------------------------------

SWAG_HEADER = "sent1,sent2,ending0,ending1,ending2,ending3,label"


def test_swag_csv_lists_each_bad_row(tmp_path):
    rows = [
        "He runs.,The man,stops.,falls.,waves.,sits.,7",
        "He runs.,The man,stops.,falls.,waves.,sits.,3",
        "He walks.,The man,stops.,,waves.,sits.,0",
        "She sings.,The woman,stops.,falls.,waves.,sits.,1",
        "She sings.,The woman,stops.,falls.,waves.,2",
    ]
    path = _write(tmp_path, "train.csv", "\n".join((SWAG_HEADER, *rows)) + "\n")
    result = _check_collected(read_multiple_choice, path, [2, 4, 6], [3, 5])
    assert [example.label for example in result.examples] == [3, 1]


def test_multiple_choice_json_lines_list_each_bad_record(tmp_path):
    records = [
        {"context": "a cat", "endings": ["sat", "ran"], "label": 1},
        {"context": "a dog", "endings": ["sat", "ran", "hid"], "label": 0},
        {"context": "a cow", "endings": ["sat", "ran"], "label": 0},
        {"context": "", "endings": ["sat", "ran"], "label": 0},
        {"context": "a hen", "endings": "sat", "label": 0},
    ]
    path = _write(tmp_path, "train.jsonl", "\n".join(json.dumps(record) for record in records) + "\n")
    result = _check_collected(read_multiple_choice, path, [2, 4, 5], [1, 3])
    assert "it needs 2, as line 1 has" in result.problems[0].message


def test_a_swag_header_without_a_column_is_the_only_problem(tmp_path):
    path = _write(tmp_path, "train.csv", "sent1,ending0,ending1,label\nHe runs.,stops.,,0\n")
    result = read_multiple_choice(path, errors="collect")
    assert result.examples == () and _lines(result) == [1]
    assert "column 'sent2' is missing" in result.problems[0].message


def test_a_read_error_is_a_value_error_that_survives_pickling():
    import pickle

    error = ReadError.at("train.csv", 4, "empty label in column 'label'.")
    copy = pickle.loads(pickle.dumps(error))
    assert isinstance(copy, ValueError) and str(copy) == "train.csv:4: empty label in column 'label'."
    assert copy.problem == error.problem and copy.record
