"""A data file's first rows as the preview shows them, read without kbert's checks.

Worker side: standard library and kbert's light readers only (no Keras).
"""

import csv
import io
import json


def _cell(value):
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def raw_table(path, file_format, has_header, max_rows, wanted_lines=()):
    """`(file_columns, rows, lines)` of a table file, read without checks.

    Stops at `max_rows` rows (or at a record it cannot parse); `wanted_lines`, where
    beyond them, adds the records that start on those lines.
    """
    from kbert.data.text_file import read_text_file

    text = read_text_file(path)
    if file_format == "jsonl":
        return _json_lines_table(text, max_rows, wanted_lines)
    return _delimited_table(text, file_format, has_header, max_rows, wanted_lines)


def raw_lines(path, max_rows, wanted_lines=()):
    """`(rows, lines)`: the file's first lines as one-cell rows (plus `wanted_lines`)."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as file:
        numbered = (
            (number, (content.rstrip("\r\n"),)) for number, content in enumerate(file, start=1)
        )
        return _shown_records(numbered, max_rows, wanted_lines)


def _shown_records(numbered_records, max_rows, wanted_lines):
    """`(records, lines)`: the first `max_rows` of the `(line, record)` pairs, plus
    those on `wanted_lines`; reads no further than the last record it may show."""
    wanted = set(wanted_lines)
    last_wanted = max(wanted, default=0)
    records, lines = [], []
    for line, record in numbered_records:
        if len(records) < max_rows or line in wanted:
            records.append(record)
            lines.append(line)
        elif line > last_wanted:
            break
    return records, lines


def _json_lines_table(text, max_rows, wanted_lines):
    """`raw_table` of a JSON Lines file: its columns are every key of the records read."""
    from kbert.data.text_file import numbered_lines

    keys = []

    def numbered_records():
        for line, content in numbered_lines(text):
            if not content.strip():
                continue
            try:
                record = json.loads(content)
            except json.JSONDecodeError:
                record = {"(invalid JSON)": content}
            if not isinstance(record, dict):
                record = {"(not an object)": content}
            # A record read adds its keys, shown or not.
            keys.extend(key for key in record if key not in keys)
            yield line, record

    records, lines = _shown_records(numbered_records(), max_rows, wanted_lines)
    table = [tuple(_cell(record.get(key, "")) for key in keys) for record in records]
    return tuple(keys), table, lines


def _delimited_table(text, file_format, has_header, max_rows, wanted_lines):
    """`raw_table` of a CSV (`file_format` "csv") or TSV file; rows are cut or padded
    to the header's width."""
    if file_format == "csv":
        reader = csv.reader(io.StringIO(text, newline=""))
    else:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = []

    def numbered_rows():
        previous_line = 0
        while True:
            try:
                row = next(reader)
            except (StopIteration, csv.Error):
                return
            line, previous_line = previous_line + 1, reader.line_num
            if not row:
                continue
            if not header:
                named = row if has_header else [f"column {index + 1}" for index in range(len(row))]
                header.extend(named)
                if has_header:
                    continue
            yield line, row

    rows, lines = _shown_records(numbered_rows(), max_rows, wanted_lines)
    width = len(header)
    table = [
        tuple(row[:width]) + ("",) * (width - len(row)) if width else tuple(row) for row in rows
    ]
    return tuple(header), table, lines
