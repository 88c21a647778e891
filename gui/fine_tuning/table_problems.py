"""Every problem kbert's reader finds in a table file, not only the first.

Worker side: standard library and kbert's light readers only (no Keras).
"""

# Problems listed at most; a file with more has more to fix than a list can help with.
MAX_PROBLEMS = 10


def table_problems(path, file_format, columns):
    """Reads a classification table; returns `(examples, problems)`.

    `kbert.data.read_classification` with `errors="collect"` reads the whole file and
    lists each rejected record; a problem that is not a record's (a missing column, say)
    is the only one.

    Args:
        path: the table file.
        file_format: "csv", "tsv" or "jsonl".
        columns: `read_classification`'s `text_column`, `pair_column`, `label_column`.

    Returns:
        `examples`: the `ClassificationExample`s, or None when there were problems;
        `problems`: the first `MAX_PROBLEMS` of them as `(line or None, message)` pairs,
        in the order of the file.
    """
    from kbert.data import read_classification

    result = read_classification(path, format=file_format, errors="collect", **columns)
    return (None if result.problems else list(result.examples)), reader_problems(result)


def reader_problems(result):
    """The first `MAX_PROBLEMS` problems of a reader's `ReadResult`, as the previews list
    them: `(line or None, message)` pairs in the order of the file."""
    return [(problem.line, problem.message) for problem in result.problems[:MAX_PROBLEMS]]


def file_problems(read, path, empty, **options):
    """Reads a CoNLL, SQuAD or multiple-choice file for its preview.

    Args:
        read: the `kbert.data` reader (`read_conll`, `read_squad`, ...).
        path: the file.
        empty: the problem to name when the file holds no examples and no problems.
        **options: the reader's other arguments.

    Returns:
        `(examples, problems)`: the reader's examples and its first `MAX_PROBLEMS`
        problems as `(line or None, message)` pairs; an argument the reader refuses (a
        file extension it cannot read) is the one problem.
    """
    try:
        result = read(path, errors="collect", **options)
    except ValueError as problem:
        return (), [(None, str(problem))]
    return result.examples, reader_problems(result) or ([] if result.examples else [(None, empty)])
