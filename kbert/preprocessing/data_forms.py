"""Data as users hold it: per-example records, pandas DataFrames, Hugging Face datasets.

Every task's preprocessor reads these "tables" here, through its `RecordFields`, and
turns them into the canonical form its `parse_inputs` takes (a dict `field -> list`)
plus the labels, in chunks of `CHUNK_SIZE` examples. A `datasets.Dataset` is read
chunk by chunk (`Dataset.iter`) over the columns the task needs, never converted to
Python lists as a whole. Neither pandas nor `datasets` is imported: a table is
recognised by the module its type comes from.

A table that does not fit the task gets a `ValueError` of one sentence that names the
fields the task expects, never the data itself; a value that is not what its field holds
(a list where a text belongs, a string no encoding takes) is named by field and row.
"""

from collections.abc import Mapping

from kbert.argument_checks import describe_value
from kbert.argument_checks import text_problem
from kbert.preprocessing.class_labels import class_label_names
from kbert.preprocessing.class_labels import named_labels

# Examples read from a table at once: enough for fast tokenizing, small beside a dataset.
CHUNK_SIZE = 1024


def table_kind(x):
    """"records", "frame", "dataset" or "dataset_dict" for a table, None for other data."""
    package = (type(x).__module__ or "").split(".")[0]
    if package == "pandas" and hasattr(x, "columns") and hasattr(x, "iloc"):
        return "frame"
    if package == "datasets":
        if hasattr(x, "column_names") and hasattr(x, "iter") and hasattr(x, "select"):
            return "dataset"
        if isinstance(x, Mapping):
            return "dataset_dict"
    if isinstance(x, list) and x and isinstance(x[0], Mapping):
        return "records"
    return None


def table_size(x):
    """The number of examples in a table."""
    _check_table(x)
    return len(x)


def split_table(x, y, cut):
    """`((x[:cut], y[:cut]), (x[cut:], y[cut:]))` in the table's own form; `y` as a
    column name stays a column name."""
    kind = _check_table(x)
    if kind == "frame":
        head, tail = x.iloc[:cut], x.iloc[cut:]
    elif kind == "dataset":
        head, tail = x.select(range(cut)), x.select(range(cut, len(x)))
    else:
        head, tail = list(x[:cut]), list(x[cut:])
    if y is None or isinstance(y, str):
        return (head, y), (tail, y)
    labels = list(y)
    return (head, labels[:cut]), (tail, labels[cut:])


def example_chunks(x, y, fields, with_labels=True, chunk_size=None):
    """Yields `(inputs, labels, count)` for consecutive chunks of the table `x`.

    Args:
        x: records, a DataFrame or a `datasets.Dataset`.
        y: None (the labels come from the table's label field, if it has one), the
            name of the label field, or the labels beside the table, one per example.
        fields: the task's `RecordFields`.
        with_labels: False reads no labels (for `predict`).
        chunk_size: examples per chunk; None: `CHUNK_SIZE`.

    `inputs` is a dict `field -> list` in the canonical field names, `labels` a list
    (or None) and `count` the number of examples in the chunk. The ids of a `datasets`
    `ClassLabel` label column come as their names (`kbert.preprocessing.class_labels`).
    """
    kind = _check_table(x)
    chunk_size = chunk_size or CHUNK_SIZE
    if kind == "records":
        columns = _record_columns(x, fields, y, with_labels)
    else:
        columns = list(x.column_names if kind == "dataset" else x.columns)
    inputs = _input_columns(fields, columns)
    label_column = _label_column(fields, columns, y) if with_labels else None
    if kind == "frame":
        _check_unique(columns, list(inputs.values()) + ([label_column] if label_column else []))
    beside = None if not with_labels or y is None or isinstance(y, str) else list(y)
    if beside is not None and len(beside) != len(x):
        raise ValueError(
            f"`y` must hold one label per example of the table ({len(x)}). "
            f"Received: {len(beside)} labels"
        )
    if not len(x):
        raise ValueError("The inputs hold no examples. Received: an empty table")
    names = class_label_names(x, label_column) if kind == "dataset" else None
    if kind == "dataset":
        wanted = list(inputs.values()) + ([label_column] if label_column else [])
        rows = x.select_columns(wanted).iter(batch_size=chunk_size)
    else:
        rows = _table_chunks(x, kind, list(inputs.values()), label_column, chunk_size)
    start = 0
    for batch in rows:
        count = len(batch[next(iter(inputs.values()))])
        labels = batch[label_column] if label_column else None
        if names is not None:
            labels = named_labels(labels, names)
        if beside is not None:
            labels = beside[start : start + count]
        chunk = {field: list(batch[name]) for field, name in inputs.items()}
        _check_texts(chunk, inputs, fields, start)
        yield chunk, labels, count
        start += count


def table_label_names(x, y, fields):
    """The label names a `datasets.Dataset` declares for its label column (a `ClassLabel`
    feature), or None: for other tables, a dataset without one, or labels given as `y`."""
    if table_kind(x) != "dataset" or not (y is None or isinstance(y, str)):
        return None
    return class_label_names(x, _label_column(fields, list(x.column_names), y))


def table_columns(x, fields):
    """`{field: list}` of the task's input fields of the whole table (for inference,
    whose results are one per example anyway)."""
    columns = {}
    for inputs, _, _ in example_chunks(x, None, fields, with_labels=False):
        for field, values in inputs.items():
            columns.setdefault(field, []).extend(values)
    return columns


def _check_table(x):
    kind = table_kind(x)
    if kind == "dataset_dict":
        raise ValueError(
            f"Pass one split of the DatasetDict, such as data['train'], not all of its "
            f"splits {sorted(map(str, x))}."
        )
    if kind is None:
        raise ValueError(
            f"Expected records, a DataFrame or a datasets.Dataset. Received: {type(x).__name__}"
        )
    return kind


def _check_unique(columns, used):
    """Raises unless each column the task reads is one column (a DataFrame may repeat names)."""
    for name in used:
        repeats = sum(1 for column in columns if column == name)
        if repeats > 1:
            raise ValueError(
                f"The DataFrame has {repeats} columns named {name!r}, the field this task "
                "reads: give each column its own name (or drop the extra ones)."
            )


def _check_texts(chunk, inputs, fields, start):
    """Raises, naming the field and the row, for an input value that is not text: every
    input field holds strings, `fields.text_lists` fields lists of strings (or a string)."""
    for field, values in chunk.items():
        for offset, value in enumerate(values):
            problem = _value_problem(value, field in fields.text_lists)
            if problem is not None:
                raise ValueError(f"The field {inputs[field]!r}, row {start + offset}: {problem}.")


def _value_problem(value, text_list):
    """Why `value` cannot be the field's value (None when it can)."""
    if not text_list or isinstance(value, str):
        return text_problem(value)
    if not isinstance(value, (list, tuple)) and type(value).__name__ != "ndarray":
        return f"expected a list of strings, found {describe_value(value)}"
    for index, item in enumerate(value):
        problem = text_problem(item)
        if problem is not None:
            return f"item {index}: {problem}"
    return None


def _record_columns(records, fields, y, with_labels):
    """The fields of the first record, after checking that every record has them."""
    first = records[0]
    wanted = [fields.column_of(field, first) for field in fields.inputs]
    if with_labels and (y is None or isinstance(y, str)):
        wanted.append(y if isinstance(y, str) else fields.label_column(first))
    wanted = [name for name in wanted if name is not None]
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(
                f"Record {index} is a {type(record).__name__}, not a dict: every record is a "
                f"dict with {fields.describe()}."
            )
        missing = [name for name in wanted if name not in record]
        if missing:
            raise ValueError(
                f"Record {index} lacks the field {missing[0]!r} that record 0 has: records "
                f"hold {fields.describe()}."
            )
    return list(first)


def _input_columns(fields, columns):
    """`{field: column}` of the task's input fields present in `columns`."""
    found = {}
    for field in fields.inputs:
        column = fields.column_of(field, columns)
        if column is not None:
            found[field] = column
        elif field not in fields.optional:
            names = " or ".join(repr(name) for name in fields.names_of(field))
            raise ValueError(
                f"The data has no field {names}: this task reads {fields.describe()}; "
                f"its fields are {sorted(map(str, columns))[:20]}."
            )
    return found


def _label_column(fields, columns, y):
    if isinstance(y, str):
        if y not in columns:
            raise ValueError(
                f"`y` names the label field {y!r}, which the data lacks; its fields are "
                f"{sorted(map(str, columns))[:20]}."
            )
        return y
    return fields.label_column(columns) if y is None else None


def _table_chunks(x, kind, input_columns, label_column, chunk_size):
    columns = input_columns + ([label_column] if label_column else [])
    for start in range(0, len(x), chunk_size):
        if kind == "frame":
            part = x.iloc[start : start + chunk_size]
            yield {name: part[name].tolist() for name in columns}
        else:
            part = x[start : start + chunk_size]
            yield {name: [record[name] for record in part] for name in columns}
