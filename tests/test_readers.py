"""kbert.data readers: the shipped samples, encodings, and errors naming file, line and field."""

import json
import logging
import os
import pathlib
import re

import pytest

from kbert.data import (
    ClassificationExample,
    GoldAnswer,
    classification_label_names,
    detect_tag_scheme,
    label_names_from_tags,
    read_classification,
    read_conll,
    read_squad,
)

DATA = pathlib.Path(__file__).parent / "data"


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


# Classification -------------------------------------------------------------------------


def test_csv_sample_with_quoted_multiline_field():
    examples = read_classification(DATA / "sample.csv", text_column="sentence")
    assert examples == [
        ClassificationExample("A gripping, funny film", None, "1", 2),
        ClassificationExample("Dull.\nVery dull.", None, "0", 3),
        ClassificationExample("Solid work", None, "1", 5),  # the quoted field spanned lines 3-4
    ]


def test_tsv_sample_keeps_quotes_literally():
    examples = read_classification(DATA / "sample.tsv", text_column="sentence")
    assert [example.text for example in examples] == ['it\'s "fine" really', 'a waste of "time']
    assert [example.label for example in examples] == ["positive", "negative"]


def test_jsonl_pairs_with_integer_labels():
    examples = read_classification(
        DATA / "sample_pairs.jsonl", text_column="premise", pair_column="hypothesis"
    )
    assert [(example.pair, example.label, example.line) for example in examples] == [
        ("A person rests.", "0", 1),
        ("A cat sits.", "2", 3),
    ]


def test_unlabelled_file_bom_and_crlf(tmp_path):
    path = _write(tmp_path, "predict.csv", b"\xef\xbb\xbftext\r\nfirst\r\nsecond\r\n")
    examples = read_classification(path, label_column=None)
    assert [(example.text, example.label, example.line) for example in examples] == [
        ("first", None, 2),
        ("second", None, 3),
    ]


def test_headerless_tsv_by_column_position(tmp_path):
    # CoLA's layout: source, label, original label, sentence; no header row.
    path = _write(
        tmp_path, "cola.tsv", "gj04\t1\t\tOur friends won't buy this.\ngj04\t0\t*\tThey drank the pub.\n"
    )
    examples = read_classification(path, text_column=3, label_column=1)
    assert [(example.text, example.label) for example in examples] == [
        ("Our friends won't buy this.", "1"),
        ("They drank the pub.", "0"),
    ]


def test_format_argument_overrides_extension(tmp_path):
    path = _write(tmp_path, "data.txt", '{"text": "hello", "label": "greeting"}\n')
    assert read_classification(path, format="jsonl")[0].label == "greeting"
    with pytest.raises(ValueError, match=re.escape("extension '.txt'")):
        read_classification(path)


def test_label_names_order_integers_numerically():
    examples = [ClassificationExample("t", None, label, 1) for label in ["10", "2", "-1", "2"]]
    assert classification_label_names(examples) == ["-1", "2", "10"]
    examples.append(ClassificationExample("t", None, "neg", 1))
    assert classification_label_names(examples) == ["-1", "10", "2", "neg"]


@pytest.mark.parametrize(
    "name, content, kwargs, message",
    [
        (
            "a.csv",
            "sentence,label\nhi,1\n",
            {},
            "a.csv:1: text_column='text' is not a column; the columns are ['sentence', 'label']",
        ),
        ("a.csv", "text,label\nhi,1\n  ,0\n", {}, "a.csv:3: empty text in column 'text'"),
        (
            "a.csv",
            "text,label\nhi,1\nthere,0,extra\n",
            {},
            "a.csv:3: the row has 3 fields but the header on line 1 has 2",
        ),
        ("a.csv", 'text,label\nhi,1\n"open quote,0\nmore\n', {}, "a.csv:3: malformed record"),
        ("a.csv", "text,label\nhi,\n", {}, "a.csv:2: empty label in column 'label'"),
        (
            "a.tsv",
            "text\tlabel\nhi\t1\n",
            {"pair_column": "hypothesis"},
            "pair_column='hypothesis' is not a column",
        ),
        (
            "a.jsonl",
            '{"text": "hi", "label": 1}\n{"text": "x", "label": 1,}\n',
            {},
            "a.jsonl:2: invalid JSON (Expecting property name",
        ),
        (
            "a.jsonl",
            '{"text": "hi", "label": 1}\n{"txt": "x"}\n',
            {},
            "a.jsonl:2: text_column='text' is not a field; the record has ['txt']",
        ),
        (
            "a.jsonl",
            '{"text": "hi", "label": 1.5}\n',
            {},
            "a.jsonl:1: label in column 'label' must be a string or an integer. Received: 1.5",
        ),
        ("a.jsonl", "[1, 2]\n", {}, "a.jsonl:1: expected a JSON object"),
        ("a.jsonl", "\n\n", {}, "a.jsonl: no records found"),
        (
            "a.csv",
            "text\nhi\n",
            {"text_column": 0, "label_column": "label"},
            "Columns must all be names (str, the file has a header row) or all positions",
        ),
        (
            "a.tsv",
            "x\thi\n",
            {"text_column": 1, "label_column": 2},
            "a.tsv:1: label_column=2 is out of range; the rows have 2 fields",
        ),
        ("a.csv", b"text\nok\n\xff\xfe\n", {"label_column": None}, "a.csv:3: the file is not valid UTF-8"),
    ],
)
def test_classification_errors_name_file_line_and_column(tmp_path, name, content, kwargs, message):
    path = _write(tmp_path, name, content)
    with pytest.raises(ValueError, match=re.escape(message)):
        read_classification(path, **kwargs)


# CoNLL ----------------------------------------------------------------------------------


def test_conll_sample_skips_docstart_and_records_lines():
    examples = read_conll(DATA / "sample.conll")
    assert [example.line for example in examples] == [3, 9, 14]
    assert examples[0].tokens == ["EU", "rejects", "German", "call", "."]
    assert examples[0].tags == ["B-ORG", "O", "B-MISC", "O", "O"]
    assert examples[1].tags == ["B-PER", "I-PER"]
    chunks = read_conll(DATA / "sample.conll", tag_column=2)
    assert chunks[0].tags[:2] == ["B-NP", "B-VP"]


def test_conll_tabs_and_unicode_spaces_inside_tokens(tmp_path):
    path = _write(tmp_path, "t.conll", "New\u00a0York\tB-LOC\r\nis\tO\n\n\nit\tO")
    examples = read_conll(path)
    assert [example.tokens for example in examples] == [["New\u00a0York", "is"], ["it"]]
    assert [example.line for example in examples] == [1, 5]


@pytest.mark.parametrize(
    "content, kwargs, message",
    [
        ("EU B-ORG\nrejects X-PER\n", {}, "t.conll:2: malformed tag 'X-PER'"),
        ("EU B-\n", {}, "t.conll:1: malformed tag 'B-'"),
        (
            "EU B-ORG\n\nlonely\n",
            {"token_column": 0, "tag_column": 1},
            "t.conll:3: tag_column=1 but the line has 1 columns",
        ),
    ],
)
def test_conll_errors_name_file_line_and_tag(tmp_path, content, kwargs, message):
    path = _write(tmp_path, "t.conll", content)
    with pytest.raises(ValueError, match=re.escape(message)):
        read_conll(path, **kwargs)


@pytest.mark.parametrize(
    "sequences, scheme",
    [
        ([["B-PER", "I-PER", "O", "B-LOC"]], "IOB2"),
        ([["O", "O"], []], "IOB2"),
        ([["I-PER", "I-PER", "B-PER", "O", "I-LOC"]], "IOB1"),
        ([["B-PER", "E-PER", "O", "S-LOC"]], "BIOES"),
    ],
)
def test_detect_tag_scheme(sequences, scheme):
    assert detect_tag_scheme(sequences) == scheme


def test_detect_tag_scheme_warns_on_mixed_starts_and_rejects_malformed(caplog):
    with caplog.at_level(logging.WARNING, logger="kbert.data.conll_reader"):
        assert detect_tag_scheme([["B-PER", "I-PER"], ["O", "I-LOC"]]) == "IOB2"
    assert "mix IOB1 and IOB2" in caplog.text
    with pytest.raises(ValueError, match=re.escape("Sequence 1, position 1: malformed tag 'PER'")):
        detect_tag_scheme([["O"], ["O", "PER"]])


def test_label_names_from_tags_are_stable():
    forward = [["B-PER", "I-PER", "O"], ["S-LOC", "B-LOC", "E-LOC"]]
    expected = ["O", "B-LOC", "E-LOC", "S-LOC", "B-PER", "I-PER"]
    assert label_names_from_tags(forward) == expected
    assert label_names_from_tags(forward[::-1]) == expected
    assert label_names_from_tags([]) == ["O"]


# SQuAD ----------------------------------------------------------------------------------


def test_squad_v2_sample_with_unanswerable_and_off_by_one_start(caplog):
    with caplog.at_level(logging.WARNING, logger="kbert.data.squad_reader"):
        examples = read_squad(DATA / "sample_squad_v2.json")
    # q1's second answer says 56; "Paris" starts at 55.
    assert "moved 1 answer starts" in caplog.text
    assert [example.id for example in examples] == ["q1", "q2", "q3"]
    assert examples[0].answers == (GoldAnswer("Paris", 0), GoldAnswer("Paris", 55))
    assert examples[2].is_impossible and examples[2].answers == ()
    for example in examples:
        assert example.title == "Paris"
        for answer in example.answers:
            assert example.context[answer.start : answer.end] == answer.text
    with pytest.raises(
        ValueError,
        match=re.escape(
            "question 'q1' at data[0].paragraphs[0].qas[0], answers[1]: answer 'Paris' is not at "
            "answer_start=56; the context has 'aris.'"
        ),
    ):
        read_squad(DATA / "sample_squad_v2.json", fix_answer_starts=False)


def test_squad_v1_without_is_impossible_and_nearest_occurrence(tmp_path):
    context = "ab xx cd xx ef xx"
    document = {
        "data": [
            {
                "paragraphs": [
                    {
                        "context": context,
                        "qas": [
                            {"id": 7, "question": "Which?", "answers": [{"text": "xx", "answer_start": 10}]}
                        ],
                    }
                ]
            }
        ]
    }
    path = _write(tmp_path, "v1.json", json.dumps(document))
    (example,) = read_squad(path)
    assert (example.id, example.title, example.is_impossible) == ("7", "", False)
    assert example.answers == (GoldAnswer("xx", 9),)  # nearest of 3, 9 and 15


def _squad_document(**question):
    qa = {"id": "q1", "question": "Who?", "answers": [{"text": "Ann", "answer_start": 0}]}
    qa.update(question)
    return {"data": [{"title": "T", "paragraphs": [{"context": "Ann met Bob.", "qas": [qa]}]}]}


@pytest.mark.parametrize(
    "document, message",
    [
        ('{"data": [', "s.json:1:11: invalid JSON"),
        ({"version": "1.1"}, "s.json: the top level: no 'data' field; the fields are ['version']"),
        (
            _squad_document(answers=[{"text": "Zed", "answer_start": 0}]),
            "question 'q1' at data[0].paragraphs[0].qas[0], answers[0]: "
            "answer 'Zed' does not occur in the context",
        ),
        (_squad_document(answers=[{"text": "Ann"}]), "answers[0]: no 'answer_start' field"),
        (
            _squad_document(answers=[{"text": "Ann", "answer_start": "0"}]),
            "'answer_start' must be int. Received '0'",
        ),
        (
            _squad_document(answers=[]),
            "question 'q1' at data[0].paragraphs[0].qas[0]: "
            "the question has no answers and is not marked is_impossible",
        ),
        (_squad_document(is_impossible=True), "is marked is_impossible but has answers"),
        (_squad_document(question=None), "'question' must be str. Received None"),
    ],
)
def test_squad_errors_name_file_question_and_field(tmp_path, document, message):
    path = _write(tmp_path, "s.json", document if isinstance(document, str) else json.dumps(document))
    with pytest.raises(ValueError, match=re.escape(message)):
        read_squad(path)


def test_a_negative_answer_start_names_file_and_question(tmp_path):
    # "Bob." ends the context: -4 would find it by Python's negative indexing.
    document = _squad_document(answers=[{"text": "Bob.", "answer_start": -4}])
    path = _write(tmp_path, "s.json", json.dumps(document))
    message = (
        "s.json: question 'q1' at data[0].paragraphs[0].qas[0], answers[0]: 'answer_start' "
        "must be an offset in the context (0 to 12). Received: answer_start=-4"
    )
    for fix in (True, False):
        with pytest.raises(ValueError, match=re.escape(message)):
            read_squad(path, fix_answer_starts=fix)


def test_an_unseen_tag_is_named_at_its_own_line(tmp_path):
    from kbert.finetuning.token_classification_recipe import TokenClassificationRecipe

    path = _write(tmp_path, "dev.conll", "-DOCSTART- O\n\nRome B-LOC\nand O\nParis B-GPE\n")
    (sentence,) = read_conll(path)
    assert sentence.line == 3 and sentence.token_lines == (3, 4, 5)
    with pytest.raises(ValueError, match=r"dev.conll, line 5: label 'B-GPE' does not occur"):
        TokenClassificationRecipe().check_labels([sentence], ["O", "B-LOC"], str(path))


def test_long_lines_and_special_files_are_named(tmp_path):
    from kbert.data.text_file import MAX_LINE_BYTES

    path = tmp_path / "train.csv"
    path.write_bytes(b"text,label\nok,1\n" + b"x" * (MAX_LINE_BYTES + 1) + b",1\n")
    with pytest.raises(ValueError, match=rf"train.csv:3: the line is longer than {MAX_LINE_BYTES}"):
        read_classification(path)
    fifo = tmp_path / "fifo.tsv"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"fifo.tsv'.*a FIFO"):
        read_classification(fifo)


def test_squad_repeated_question_id(tmp_path):
    document = _squad_document()
    qas = document["data"][0]["paragraphs"][0]["qas"]
    qas.append(dict(qas[0]))
    path = _write(tmp_path, "s.json", json.dumps(document))
    with pytest.raises(ValueError, match=re.escape("qas[1]: the id 'q1' was used before")):
        read_squad(path)


def test_readers_and_metrics_import_without_keras():
    import subprocess
    import sys

    modules = (
        "kbert.data.classification_reader, kbert.data.conll_reader, kbert.data.squad_reader, kbert.metrics"
    )
    code = f"import sys, {modules}; assert 'keras' not in sys.modules, 'keras imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
