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
    from kbert.data.text_file import numbered_lines
    from kbert.data.text_file import read_text_file

    text = read_text_file(path)
    wanted = set(wanted_lines)
    last_wanted = max(wanted, default=0)
    rows, lines = [], []

    def keep(line):
        """Whether to show the record on `line`; None once nothing later is wanted."""
        if len(rows) < max_rows or line in wanted:
            return True
        return False if line < last_wanted else None

    if file_format == "jsonl":
        keys = []
        for line, content in numbered_lines(text):
            if not content.strip():
                continue
            try:
                record = json.loads(content)
            except json.JSONDecodeError:
                record = {"(invalid JSON)": content}
            if not isinstance(record, dict):
                record = {"(not an object)": content}
            keys.extend(key for key in record if key not in keys)
            shown = keep(line)
            if shown is None:
                break
            if shown:
                rows.append(record)
                lines.append(line)
        table = [tuple(_cell(record.get(key, "")) for key in keys) for record in rows]
        return tuple(keys), table, lines

    if file_format == "csv":
        reader = csv.reader(io.StringIO(text, newline=""))
    else:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    header, previous_line = None, 0
    while True:
        try:
            row = next(reader)
        except (StopIteration, csv.Error):
            break
        line, previous_line = previous_line + 1, reader.line_num
        if not row:
            continue
        if header is None:
            header = row if has_header else [f"column {index + 1}" for index in range(len(row))]
            if has_header:
                continue
        shown = keep(line)
        if shown is None:
            break
        if shown:
            rows.append(row)
            lines.append(line)
    header = header or []
    width = len(header)
    table = [
        tuple(row[:width]) + ("",) * (width - len(row)) if width else tuple(row) for row in rows
    ]
    return tuple(header), table, lines


def raw_lines(path, max_rows, wanted_lines=()):
    """`(rows, lines)`: the file's first lines as one-cell rows (plus `wanted_lines`)."""
    wanted = set(wanted_lines)
    last_wanted = max(wanted, default=0)
    rows, lines = [], []
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as file:
        for number, content in enumerate(file, start=1):
            if number <= max_rows or number in wanted:
                rows.append((content.rstrip("\r\n"),))
                lines.append(number)
            elif number > last_wanted:
                break
    return rows, lines
