"""The first rows of a training file and what kbert's reader thinks of the whole file.

Worker side: reads files (standard library and kbert's light readers only, no Keras),
so `TrainingDataPreview.load` may run on any thread.
"""

import csv
import dataclasses
import json
import pathlib
import re

from kbert.finetuning.task_specs import TASK_SPECS
from kbert_gui.fine_tuning.column_mapping_form import CHOOSE_LABEL
from kbert_gui.fine_tuning.raw_rows import raw_lines
from kbert_gui.fine_tuning.raw_rows import raw_table
from kbert_gui.fine_tuning.table_problems import file_problems
from kbert_gui.fine_tuning.table_problems import table_problems

# The data each task of the fine-tuning tab reads ("masked-lm" is continued masked-LM
# pretraining on plain text): a table (CSV/TSV/JSON Lines), CoNLL, SQuAD JSON or text.
DATA_KINDS = {name: spec.data_kind for name, spec in TASK_SPECS.items()}
# Formats of table files by extension, as `kbert.data.read_classification` reads them.
_TABLE_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
}


@dataclasses.dataclass(frozen=True)
class TrainingDataPreview:
    """A training file's first rows and its validation by kbert's reader.

    Built by `load` (in a worker); shown by `DataPreviewModel` and the tab.

    Attributes:
        path: the file.
        kind: "table", "conll", "squad", "choices" or "text" (see `DATA_KINDS`).
        file_columns: the columns a table file offers for mapping (header names, or
            "column 1", ... without a header row); for multiple choice, the SWAG CSV's
            columns other than the endings, or the first JSON Lines record's fields
            other than "context" and "endings"; empty for other kinds.
        headers: the preview's column titles.
        rows: the preview rows, tuples of strings.
        lines: the file line where each row starts (None where unknown, as in SQuAD).
        summary: a line about the whole file ("120 examples; labels: neg, pos").
        error: the reader's message for the first problem, or None.
        error_line: the line it names, or None.
        problems: every problem found, `(line or None, message)` pairs in the order
            of the file (up to `table_problems.MAX_PROBLEMS`).
    """

    path: str
    kind: str
    file_columns: tuple = ()
    headers: tuple = ()
    rows: tuple = ()
    lines: tuple = ()
    summary: str = ""
    error: str = None
    error_line: int = None
    problems: tuple = ()

    def __post_init__(self):
        if self.error is not None and not self.problems:
            object.__setattr__(self, "problems", ((self.error_line, self.error),))

    @classmethod
    def load(cls, path, task_name, columns=None, has_header=True, max_rows=200):
        """Reads the first `max_rows` rows of `path` and validates the whole file.

        Args:
            path: the training (or evaluation) file.
            task_name: a key of `DATA_KINDS`.
            columns: for tables, `{"text_column", "pair_column", "label_column"}` as
                `read_classification` takes them; None previews the raw rows only.
                For multiple choice, `{"context_column", "start_column",
                "label_column"}` as `MultipleChoiceRecipe` takes them (start "" for
                none); None reads SWAG's names.
            has_header: whether a CSV/TSV file starts with a header row.
            max_rows: rows to preview.

        Returns:
            a `TrainingDataPreview`. Problems with the data are in `error`; a file
            that cannot be opened raises `OSError`.
        """
        if task_name not in DATA_KINDS:
            raise ValueError(
                f"`task_name` must be one of {sorted(DATA_KINDS)}. Received: {task_name!r}"
            )
        path = str(path)
        if not pathlib.Path(path).is_file():
            raise ValueError(f"No file at {path!r}.")
        kind = DATA_KINDS[task_name]
        loader = {
            "table": _load_table,
            "conll": _load_conll,
            "squad": _load_squad,
            "choices": _load_choices,
            "text": _load_text,
        }[kind]
        if kind == "table":
            return loader(path, columns, has_header, max_rows)
        if kind == "choices":
            return loader(path, columns, max_rows)
        return loader(path, max_rows)

    @property
    def ok(self):
        return self.error is None


def _load_table(path, columns, has_header, max_rows):
    from kbert.data import classification_label_names
    from kbert.finetuning.label_checks import check_several_labels

    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in _TABLE_FORMATS:
        return TrainingDataPreview(
            path,
            "table",
            error=f"{path}: a table file must end in {', '.join(sorted(_TABLE_FORMATS))}.",
        )
    file_format = _TABLE_FORMATS[suffix]
    if file_format == "jsonl":
        has_header = True
    file_columns, rows, lines = raw_table(path, file_format, has_header, max_rows)
    if not file_columns:
        return TrainingDataPreview(
            path, "table", error=f"{path}: the file is empty: it has no columns and no rows."
        )

    def shown(summary="", error=None, error_line=None, problems=()):
        return TrainingDataPreview(
            path,
            "table",
            file_columns,
            file_columns,
            tuple(rows),
            tuple(lines),
            summary,
            error,
            error_line,
            tuple(problems),
        )

    if columns is not None and columns.get("label_column") is None:
        return shown(error=CHOOSE_LABEL)
    if columns is None:
        return shown(f"{len(rows):,} rows shown")
    examples, problems = table_problems(path, file_format, columns)
    if problems:
        missing = [line for line, _ in problems if line is not None and line not in lines]
        if missing:
            file_columns, rows, lines = raw_table(
                path, file_format, has_header, max_rows, missing
            )
        (first_line, first), *_ = problems
        return shown(error=first, error_line=first_line, problems=problems)
    labels = classification_label_names(examples)
    try:
        check_several_labels(labels, path, columns["label_column"])
    except ValueError as problem:
        return shown(error=str(problem))
    summary = f"{len(examples):,} examples; {len(labels)} labels: {', '.join(labels[:12])}"
    if len(labels) > 12:
        summary += ", …"
    return shown(summary)


def _failed(path, kind, problems, max_rows, file_columns=()):
    """A rejected file's preview: its first lines and those of its `problems`, raw."""
    (line, message), *_ = problems
    rows, lines = raw_lines(path, max_rows, [line for line, _ in problems if line is not None])
    return TrainingDataPreview(
        path,
        kind,
        tuple(file_columns),
        ("line",),
        tuple(rows),
        tuple(lines),
        "",
        message,
        line,
        tuple(problems),
    )


def _load_conll(path, max_rows):
    from kbert.data import detect_tag_scheme
    from kbert.data import label_names_from_tags
    from kbert.data import read_conll

    sentences, problems = file_problems(read_conll, path, f"{path}: no sentences found.")
    if problems:
        return _failed(path, "conll", problems, max_rows)
    tag_sequences = [sentence.tags for sentence in sentences]
    labels = label_names_from_tags(tag_sequences)
    scheme = detect_tag_scheme(tag_sequences)
    shown = sentences[:max_rows]
    rows = tuple((" ".join(sentence.tokens), " ".join(sentence.tags)) for sentence in shown)
    summary = f"{len(sentences):,} sentences; {scheme} tags: {', '.join(labels)}"
    return TrainingDataPreview(
        path,
        "conll",
        (),
        ("tokens", "tags"),
        rows,
        tuple(sentence.line for sentence in shown),
        summary,
    )


def _load_squad(path, max_rows):
    from kbert.data import read_squad

    questions, problems = file_problems(read_squad, path, f"{path}: no questions found.")
    if problems:
        return _failed(path, "squad", problems, max_rows)
    shown = questions[:max_rows]
    rows = tuple(
        (
            question.id,
            question.question,
            "(no answer)"
            if question.is_impossible
            else " | ".join(f"{answer.text} @{answer.start}" for answer in question.answers),
            question.context,
        )
        for question in shown
    )
    unanswerable = sum(question.is_impossible for question in questions)
    summary = f"{len(questions):,} questions ({unanswerable:,} without an answer)"
    return TrainingDataPreview(
        path,
        "squad",
        (),
        ("id", "question", "answers", "context"),
        rows,
        (None,) * len(rows),
        summary,
    )


def _choice_columns(path):
    """The columns a multiple-choice file offers for mapping (see `file_columns`)."""
    from kbert.data.text_file import read_text_file

    try:
        text = read_text_file(path)
    except ValueError:
        return ()
    first = next((line for line in text.splitlines() if line.strip()), "")
    if pathlib.Path(path).suffix.lower() == ".csv":
        header = next(csv.reader([first]), [])
        return tuple(name for name in header if not re.fullmatch(r"ending\d+", name))
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    fields = record if isinstance(record, dict) else ()
    return tuple(str(name) for name in fields if name not in ("context", "endings"))


def _load_choices(path, columns, max_rows):
    from kbert.data import read_multiple_choice

    file_columns = _choice_columns(path)
    # As `MultipleChoiceRecipe.read` reads them (the recipe itself would load Keras):
    # None keeps SWAG's name, a start column of "" means none.
    options = {key: value for key, value in (columns or {}).items() if value is not None}
    if "start_column" in options:
        options["start_column"] = options["start_column"] or None
    examples, problems = file_problems(read_multiple_choice, path, f"{path}: no records found.", **options)
    if problems:
        return _failed(path, "choices", problems, max_rows, file_columns)
    shown = examples[:max_rows]
    # One column per ending (every example has as many endings as the first).
    rows = tuple((example.context, *example.endings, str(example.label)) for example in shown)
    count = len(examples[0].endings)
    summary = f"{len(examples):,} examples, {count} endings each"
    return TrainingDataPreview(
        path,
        "choices",
        file_columns,
        ("context", *(f"ending {index}" for index in range(count)), "label"),
        rows,
        tuple(example.line for example in shown),
        summary,
    )


def _load_text(path, max_rows):
    from kbert.data import ReadError
    from kbert.data.text_file import read_text_file

    try:
        text = read_text_file(path)
    except ValueError as problem:
        line = problem.problem.line if isinstance(problem, ReadError) else None
        return _failed(path, "text", [(line, str(problem))], max_rows)
    all_lines = text.splitlines()
    if not any(line.strip() for line in all_lines):
        return _failed(path, "text", [(None, f"{path}: the file holds no text.")], max_rows)
    documents, in_document = 0, False
    for line in all_lines:
        if line.strip() and not in_document:
            documents += 1
        in_document = bool(line.strip())
    rows = tuple((line,) for line in all_lines[:max_rows])
    summary = f"{len(all_lines):,} lines; {documents:,} documents (separated by blank lines)"
    return TrainingDataPreview(
        path, "text", (), ("text",), rows, tuple(range(1, len(rows) + 1)), summary
    )
