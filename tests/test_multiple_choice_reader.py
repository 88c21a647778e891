"""The multiple-choice reader: SWAG's CSV and JSON Lines, and its one-line errors."""

import json
import re

import pytest

from kbert.data import MultipleChoiceExample
from kbert.data import read_multiple_choice

SWAG_HEADER = "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label"
SWAG_ROWS = (
    'anetv_1,5,"Students lower. They",Students lower their eyes.,They,gold,'
    'smile.,"jump, then sit.",cry.,sing.,1',
    "lsmdc_2,7,He runs. The man,He runs.,The man,gen,stops.,falls.,waves.,sits.,3",
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def swag_file(tmp_path, rows=SWAG_ROWS, header=SWAG_HEADER):
    return write(tmp_path, "train.csv", "\n".join((header, *rows)) + "\n")


def test_swag_csv_joins_sent2_and_each_ending_and_ignores_other_columns(tmp_path):
    examples = read_multiple_choice(swag_file(tmp_path))
    assert examples == [
        MultipleChoiceExample(
            "Students lower their eyes.",
            ("They smile.", "They jump, then sit.", "They cry.", "They sing."),
            1,
            2,
        ),
        MultipleChoiceExample(
            "He runs.", ("The man stops.", "The man falls.", "The man waves.", "The man sits."), 3, 3
        ),
    ]
    unlabelled = read_multiple_choice(swag_file(tmp_path), label_column=None, start_column=None)
    assert unlabelled[1].label is None and unlabelled[1].endings[0] == "stops."


def test_json_lines_take_context_endings_and_label(tmp_path):
    records = [
        {"context": "A cat sat.", "endings": ["It slept.", "It flew.", "It sang."], "label": 0},
        {"context": "A dog ran.", "endings": ["It barked.", "It froze.", "It read."], "label": 2},
    ]
    path = write(tmp_path, "dev.jsonl", "\n".join(json.dumps(record) for record in records))
    examples = read_multiple_choice(path)
    assert [example.label for example in examples] == [0, 2]
    assert examples[1].endings == ("It barked.", "It froze.", "It read.")
    assert examples[1].line == 2


@pytest.mark.parametrize(
    "rows, message",
    [
        (
            (SWAG_ROWS[0], "x,1,s,He runs.,The man,gen,stops.,falls.,waves.,sits.,4"),
            r"train\.csv:3: label in column 'label' 4 is out of range: the example has 4 endings",
        ),
        (
            (SWAG_ROWS[0], "x,1,s,He runs.,The man,gen,stops.,,waves.,sits.,0"),
            r"train\.csv:3: empty ending in column 'ending1'\.",
        ),
        (
            ("x,1,s,He runs.,The man,gen,stops.,falls.,waves.,0",),
            r"train\.csv:2: the row has 10 fields but the header has 11; every row needs all 4 "
            r"endings",
        ),
    ],
    ids=["label-out-of-range", "empty-ending", "fewer-endings"],
)
def test_bad_csv_rows_are_one_line_errors_naming_file_line_and_field(tmp_path, rows, message):
    with pytest.raises(ValueError, match=message) as raised:
        read_multiple_choice(swag_file(tmp_path, rows))
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "second, message",
    [
        (
            {"context": "B", "endings": ["x", "y", "z"], "label": 3},
            r"dev\.jsonl:2: label in field 'label' 3 is out of range: the example has 3 endings",
        ),
        (
            {"context": "B", "endings": ["x", " ", "z"], "label": 0},
            r"dev\.jsonl:2: empty ending 1 in field 'endings'\.",
        ),
        (
            {"context": "B", "endings": ["x", "y"], "label": 0},
            r"dev\.jsonl:2: the example has 2 endings; it needs 3, as line 1 has\.",
        ),
        (
            {"context": "B", "label": 0},
            r"dev\.jsonl:2: field 'endings' is missing",
        ),
    ],
    ids=["label-out-of-range", "empty-ending", "fewer-endings", "missing-field"],
)
def test_bad_json_lines_are_one_line_errors_naming_file_line_and_field(tmp_path, second, message):
    first = {"context": "A", "endings": ["x", "y", "z"], "label": 1}
    path = write(tmp_path, "dev.jsonl", json.dumps(first) + "\n" + json.dumps(second) + "\n")
    with pytest.raises(ValueError, match=message) as raised:
        read_multiple_choice(path)
    assert "\n" not in str(raised.value)


def test_a_header_without_endings_names_the_columns(tmp_path):
    path = swag_file(tmp_path, SWAG_ROWS[:1], header=SWAG_HEADER.replace("ending", "option"))
    with pytest.raises(ValueError, match=re.escape(f"{path}:1: the header must have the columns")):
        read_multiple_choice(path)
