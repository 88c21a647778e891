"""What a run record (`kbert-app-run.json`) may hold, checked before any of it is shown.

The record sits in a run folder, which can come from anywhere (a shared drive, a
download, another user): every field is checked for its type, range and size here, in
the worker that reads it, so that the tab restores all of a record or nothing of it and
no Qt slot meets a value it cannot take. What only costs time to show (curve points,
log lines, table rows) is bounded rather than refused: a curve is thinned to
`MAX_CURVE_POINTS` keeping each stretch's lowest and highest point, and the latest
`MAX_LOG_LINES` lines and `MAX_EPOCH_ROWS` rows are kept. The app writes its records
through the same bounds (`bounded`), so what it writes it reads back.

Problems are `ValueError`s whose message is the end of a sentence naming the field
("its field 'settings.epochs' must be a whole number from 1 to 10000, not '3'").
"""

import math

import numpy as np

from kbert.training.precisions import PRECISIONS
from kbert_gui.fine_tuning.fine_tuning_tasks import TASKS
from kbert_gui.fine_tuning.hyperparameter_form import ADVANCED_FIELDS
from kbert_gui.fine_tuning.hyperparameter_form import MAIN_FIELDS
from kbert_gui.fine_tuning.probe_input import PROBE_FIELDS
from kbert_gui.fine_tuning.training_data_preview import DATA_KINDS

# A record the app writes is well under 1 MB (bounded below). Parsing JSON holds the
# GIL, so the worker that reads a record stalls the window for as long (0.1 s a MiB):
# the cap keeps a hostile record to a moment.
MAX_RECORD_BYTES = 4 * 2**20
# A record nests 3 deep (the document, a list of points or rows, a point or a row).
MAX_RECORD_DEPTH = 4
# A few thousand points draw the curve as well as millions (the chart has fewer pixels).
MAX_CURVE_POINTS = 4000
# As many lines as the log view keeps (`FineTuningPanel.log_view`'s block count).
MAX_LOG_LINES = 5000
MAX_LOG_LINE_CHARS = 1000
MAX_EPOCH_ROWS = 1000
MAX_PATH_CHARS = 4096
MAX_NAME_CHARS = 200
MAX_PROBE_CHARS = 100_000
MAX_ENDINGS = 64
MAX_SEARCH_CHARS = 10_000
MAX_ROW_KEYS = 64
MAX_STEP = 10**12
# Larger values would overflow the chart's axis arithmetic; no loss or score gets there.
MAX_ABS_VALUE = 1e30
MAX_ABS_INT = 2**63
SETTING_SPECS = {**MAIN_FIELDS, **ADVANCED_FIELDS}
COLUMN_KEYS = {
    "table": ("text_column", "pair_column", "label_column"),
    "choices": ("context_column", "start_column", "label_column"),
}
SEARCH_COUNTS = {"restarts": (1, 1000), "trials": (1, 100_000), "total_trials": (1, 10**7)}


def record_fields(document, record_format):
    """The `RunRecord` fields of the parsed record `document`, checked and bounded.

    Args:
        document: the parsed JSON.
        record_format: the `format` the record must have (`RunRecord`'s).

    Raises:
        ValueError: the end of a sentence naming the first field that is wrong.
    """
    if not isinstance(document, dict):
        raise ValueError(f"it must be a JSON object, not {_shown(document)}")
    found = _get(document, "format")
    if not _is_integer(found, record_format, record_format):
        raise _wrong("format", f"{record_format} (a record of this app)", found)
    task = _choice(document, "task", TASKS)
    fields = {
        "task": task,
        "source": _text(document, "source", MAX_PATH_CHARS),
        "train": _text(document, "train", MAX_PATH_CHARS),
        "evaluation": _optional_text(document, "evaluation", MAX_PATH_CHARS),
        "columns": _columns(document, task),
        "settings": _settings(_object(document, "settings", len(SETTING_SPECS) * 2)),
        "probe": _probe(document, task),
        "curve_names": _curve_names(document),
        "loss_points": _points(document, "loss_points"),
        "metric_points": _points(document, "metric_points"),
        "epoch_rows": _epoch_rows(document),
        "log": _log(document),
        "search": _search(document),
    }
    return bounded(fields)


def bounded(fields):
    """`fields` of a `RunRecord` with its curves thinned and its latest lines and rows
    kept, each line cut to `MAX_LOG_LINE_CHARS`."""
    return {
        **fields,
        "loss_points": thin_points(fields["loss_points"], MAX_CURVE_POINTS),
        "metric_points": thin_points(fields["metric_points"], MAX_CURVE_POINTS),
        "epoch_rows": tuple(fields["epoch_rows"])[-MAX_EPOCH_ROWS:],
        "log": tuple(_cut(line) for line in tuple(fields["log"])[-MAX_LOG_LINES:]),
    }


def thin_points(points, limit):
    """At most `limit` of the `(step, value)` `points`, in step order: the first, the
    last, and the lowest and highest value of each stretch between."""
    points = tuple(tuple(point) for point in points)
    if len(points) <= limit:
        return points
    values = np.array([value for _, value in points[1:-1]], dtype=np.float64)
    edges = np.linspace(0, len(values), (limit - 2) // 2 + 1).astype(np.int64)
    kept = {0, len(points) - 1}
    for start, end in zip(edges[:-1], edges[1:]):
        if end > start:
            stretch = values[start:end]
            kept.update((1 + start + int(np.argmin(stretch)), 1 + start + int(np.argmax(stretch))))
    return tuple(points[index] for index in sorted(kept))


def _cut(line):
    return line if len(line) <= MAX_LOG_LINE_CHARS else line[: MAX_LOG_LINE_CHARS - 1] + "…"


# --- Values ---------------------------------------------------------------------------


def _shown(value):
    """`value` as a sentence names it, briefly."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else f"a text of {len(value)} characters"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return f"an object with {len(value)} key{'s' if len(value) != 1 else ''}"
    text = repr(value)
    return text if len(text) <= 40 else f"a number of {len(text)} digits"


def _wrong(name, expected, value):
    return ValueError(f"its field {name!r} must be {expected}, not {_shown(value)}")


def _get(document, name):
    if name not in document:
        raise ValueError(f"its field {name!r} is missing")
    return document[name]


def _is_text(value, limit):
    return isinstance(value, str) and len(value) <= limit


def _text(document, name, limit):
    value = _get(document, name)
    if not _is_text(value, limit) or not value.strip():
        raise _wrong(name, f"a text of 1 to {limit} characters", value)
    return value


def _optional_text(document, name, limit):
    value = _get(document, name)
    if value is not None and not _is_text(value, limit):
        raise _wrong(name, f"null or a text of at most {limit} characters", value)
    return value


def _choice(document, name, choices):
    value = _get(document, name)
    if not isinstance(value, str) or value not in choices:
        raise _wrong(name, "one of " + ", ".join(map(repr, choices)), value)
    return value


def _object(document, name, max_keys, optional=False):
    value = document.get(name) if optional else _get(document, name)
    if value is None and optional:
        return None
    if not isinstance(value, dict) or len(value) > max_keys:
        raise _wrong(name, f"an object of at most {max_keys} keys", value)
    return value


def _list(document, name):
    value = _get(document, name)
    if not isinstance(value, list):
        raise _wrong(name, "a list", value)
    return value


def _is_integer(value, low, high):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _is_number(value, low, high):
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return is_number and math.isfinite(value) and low <= value <= high


# --- Fields ---------------------------------------------------------------------------


def _columns(document, task):
    kind = DATA_KINDS[task]
    keys = COLUMN_KEYS.get(kind, ())
    columns = _object(document, "columns", len(keys), optional=True)
    if columns is None:
        return None
    if not keys:
        raise _wrong("columns", f"null for {task}", columns)
    for key, value in columns.items():
        if key not in keys:
            raise ValueError(f"its field 'columns' has the unknown key {_shown(key)}")
        by_position = kind == "table" and _is_integer(value, 0, 100_000)
        if not (value is None or by_position or _is_text(value, MAX_NAME_CHARS)):
            raise _wrong(f"columns.{key}", "null, a column name or a column number", value)
    return columns


def _settings(settings):
    """The form's fields of `settings`, each in its range (other names are dropped: the
    form has no place for them)."""
    checked = {}
    for name, value in settings.items():
        spec = SETTING_SPECS.get(name)
        if spec is None:
            continue
        _, kind, low, high, none_text = spec
        if value is None and none_text is not None:
            checked[name] = value
            continue
        if kind == "int" and not _is_integer(value, low, high):
            raise _wrong(f"settings.{name}", f"a whole number from {low} to {high}", value)
        if kind == "float" and not _is_number(value, low, high):
            raise _wrong(f"settings.{name}", f"a number from {low:g} to {high:g}", value)
        if kind == "choice" and value not in PRECISIONS:
            raise _wrong(f"settings.{name}", "one of " + ", ".join(PRECISIONS), value)
        if kind == "devices" and not isinstance(value, bool):
            raise _wrong(f"settings.{name}", "true or false", value)
        checked[name] = value
    return checked


def _probe(document, task):
    fields = PROBE_FIELDS[task]
    probe = _object(document, "probe", len(fields), optional=True)
    if probe is None:
        return None
    for name, value in probe.items():
        if name not in fields:
            raise ValueError(
                f"its field 'probe' has {_shown(name)}, which is not a field of the {task} probe"
            )
        if name == "endings":
            valid = isinstance(value, list) and len(value) <= MAX_ENDINGS
            if not valid or not all(_is_text(ending, MAX_PROBE_CHARS) for ending in value):
                raise _wrong("probe.endings", f"a list of at most {MAX_ENDINGS} texts", value)
        elif not _is_text(value, MAX_PROBE_CHARS):
            raise _wrong(f"probe.{name}", f"a text of at most {MAX_PROBE_CHARS} characters", value)
    return probe


def _curve_names(document):
    names = _list(document, "curve_names")
    valid = (
        len(names) == 3
        and all(_is_text(name, MAX_NAME_CHARS) for name in names[:2])
        and isinstance(names[2], bool)
    )
    if not valid:
        raise _wrong("curve_names", "[loss name, metric name, true or false]", names)
    return tuple(names)


def _points(document, name):
    """`(step, value)` pairs: steps whole and rising, values finite."""
    points = []
    previous = -1
    for index, point in enumerate(_list(document, name)):
        valid = isinstance(point, list) and len(point) == 2
        if not valid or not _is_integer(point[0], previous + 1, MAX_STEP):
            raise _wrong(
                f"{name}[{index}]", f"[step, value] with a step from {previous + 1} to "
                f"{MAX_STEP}", point if not valid else point[0]
            )
        if not _is_number(point[1], -MAX_ABS_VALUE, MAX_ABS_VALUE):
            raise _wrong(f"{name}[{index}]", "[step, value] with a finite value", point[1])
        previous = point[0]
        points.append((point[0], float(point[1])))
    return tuple(points)


def _epoch_rows(document):
    rows = _list(document, "epoch_rows")[-MAX_EPOCH_ROWS:]
    for row in rows:
        if not isinstance(row, dict) or len(row) > MAX_ROW_KEYS:
            raise _wrong("epoch_rows", f"a list of objects of at most {MAX_ROW_KEYS} keys", row)
        for key, value in row.items():
            if len(key) > MAX_NAME_CHARS or not _is_row_value(value):
                raise _wrong(f"epoch_rows.{key[:40]}", "a number, a short text or null", value)
    return tuple(rows)


def _is_row_value(value):
    if isinstance(value, float) or value is None or isinstance(value, bool):
        return True  # a diverged epoch's NaN loss is a score the table shows
    return _is_integer(value, -MAX_ABS_INT, MAX_ABS_INT) or _is_text(value, MAX_LOG_LINE_CHARS)


def _log(document):
    lines = _list(document, "log")[-MAX_LOG_LINES:]
    for line in lines:
        if not isinstance(line, str):
            raise _wrong("log", "a list of texts", line)
    return tuple(lines)


def _search(document):
    search = _object(document, "search", 4, optional=True)
    if search is None:
        return None
    if "space" not in search:
        raise ValueError("its field 'search.space' is missing")
    space = search["space"]
    if not _is_text(space, MAX_SEARCH_CHARS) or not space.strip():
        raise _wrong("search.space", f"a text of 1 to {MAX_SEARCH_CHARS} characters", space)
    for key, value in search.items():
        if key == "space":
            continue
        if key not in SEARCH_COUNTS:
            raise ValueError(f"its field 'search' has the unknown key {_shown(key)}")
        low, high = SEARCH_COUNTS[key]
        if value is not None and not _is_integer(value, low, high):
            raise _wrong(f"search.{key}", f"null or a whole number from {low} to {high}", value)
    return search
