"""The records of a search journal checked before Optuna applies them.

Optuna's journal storage trusts every record: an unknown operation raises an
AssertionError, a missing field a KeyError, a string where a number belongs a TypeError
deep inside the sampler. A search folder may be shared between machines, so its journal
is input like any other file: `check_record` checks one record's operation, fields and
their types, and raises a `ValueError` naming the file and line.
"""

import datetime
import math

# Optuna's JournalOperation codes (optuna/storages/journal/_storage.py) -> the fields each
# record needs, by the kind of value they hold.
CREATE_STUDY, DELETE_STUDY, SET_STUDY_USER_ATTR, SET_STUDY_SYSTEM_ATTR = 0, 1, 2, 3
CREATE_TRIAL, SET_TRIAL_PARAM, SET_TRIAL_STATE_VALUES = 4, 5, 6
SET_TRIAL_INTERMEDIATE_VALUE, SET_TRIAL_USER_ATTR, SET_TRIAL_SYSTEM_ATTR = 7, 8, 9
DISCARD_TRIALS = 10
_REQUIRED = {
    CREATE_STUDY: {"study_name": "text", "directions": "directions"},
    DELETE_STUDY: {"study_id": "index"},
    SET_STUDY_USER_ATTR: {"study_id": "index", "user_attr": "one_attribute"},
    SET_STUDY_SYSTEM_ATTR: {"study_id": "index", "system_attr": "one_attribute"},
    CREATE_TRIAL: {"study_id": "index", "datetime_start": "time"},
    SET_TRIAL_PARAM: {
        "trial_id": "index", "param_name": "text", "param_value_internal": "number",
        "distribution": "text",
    },
    SET_TRIAL_STATE_VALUES: {"trial_id": "index", "state": "state", "values": "numbers"},
    SET_TRIAL_INTERMEDIATE_VALUE: {
        "trial_id": "index", "step": "index", "intermediate_value": "number",
    },
    SET_TRIAL_USER_ATTR: {"trial_id": "index", "user_attr": "one_attribute"},
    SET_TRIAL_SYSTEM_ATTR: {"trial_id": "index", "system_attr": "one_attribute"},
    DISCARD_TRIALS: {"study_id": "index", "trial_ids": "indices"},
}
_OPTIONAL = {
    "datetime_start": "time", "datetime_complete": "time", "state": "state",
    "value": "number_or_none", "values": "numbers", "distributions": "texts",
    "params": "number_map", "user_attrs": "attributes", "system_attrs": "attributes",
    "intermediate_values": "number_map",
}
_STATES = range(5)  # RUNNING, COMPLETE, PRUNED, FAIL, WAITING
_DIRECTIONS = range(3)  # NOT_SET, MINIMIZE, MAXIMIZE
_MAX_INDEX = 2**31


def _is_index(value):
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_INDEX


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and (
        not isinstance(value, float) or not math.isnan(value)
    )


def _is_time(value):
    if value is None:
        return True
    if not isinstance(value, str) or len(value) > 64:
        return False
    try:
        datetime.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


_KINDS = {
    "text": lambda value: isinstance(value, str),
    "index": _is_index,
    "indices": lambda value: isinstance(value, list) and all(map(_is_index, value)),
    "number": _is_number,
    "number_or_none": lambda value: value is None or _is_number(value),
    "numbers": lambda value: value is None or (
        isinstance(value, list) and all(map(_is_number, value))
    ),
    "time": _is_time,
    "state": lambda value: _is_index(value) and value in _STATES,
    "directions": lambda value: isinstance(value, list) and bool(value) and all(
        _is_index(item) and item in _DIRECTIONS for item in value
    ),
    "one_attribute": lambda value: isinstance(value, dict) and len(value) == 1 and all(
        isinstance(key, str) for key in value
    ),
    "attributes": lambda value: isinstance(value, dict) and all(
        isinstance(key, str) for key in value
    ),
    "texts": lambda value: isinstance(value, dict) and all(
        isinstance(key, str) and isinstance(item, str) for key, item in value.items()
    ),
    "number_map": lambda value: isinstance(value, dict) and all(
        isinstance(key, str) and _is_number(item) for key, item in value.items()
    ),
}


def check_record(record, source):
    """Returns `record` (a parsed journal line) if Optuna can apply it, else raises.

    Args:
        record: the parsed JSON of one line.
        source: "FILE:LINE", for the message.

    Raises:
        ValueError: "FILE:LINE: ..." naming what is wrong.
    """
    if not isinstance(record, dict):
        raise ValueError(f"{source}: a journal record must be a JSON object.")
    operation = record.get("op_code")
    if not _is_index(operation) or operation not in _REQUIRED:
        raise ValueError(f"{source}: unknown journal operation op_code={operation!r}.")
    if not isinstance(record.get("worker_id"), str):
        raise ValueError(f"{source}: the journal record has no worker_id.")
    for field, kind in _REQUIRED[operation].items():
        if field not in record:
            raise ValueError(f"{source}: the journal record lacks the field {field!r}.")
    for field, value in record.items():
        kind = _REQUIRED[operation].get(field, _OPTIONAL.get(field))
        if kind is not None and not _KINDS[kind](value):
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ValueError(
                f"{source}: the journal record's field {field!r} is not a valid {kind}: "
                f"{shown}."
            )
    if operation == CREATE_TRIAL and not set(record.get("params", {})) <= set(
        record.get("distributions", {})
    ):
        raise ValueError(f"{source}: the journal record has a parameter without a distribution.")
    return record
