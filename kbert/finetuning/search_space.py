"""What a fine-tuning search varies: a grid of values, or ranges to draw from, and how a
user writes them."""

import itertools
import pathlib

from kbert.finetuning.fine_tuning_config import FineTuningConfig
from kbert.finetuning.search_range import SearchRange

# The settings a search may vary, with the type of their values. (The seed varies through
# the restarts; the rest describes a run, not its hyperparameters.)
SEARCHABLE = {
    "learning_rate": float,
    "batch_size": int,
    "epochs": int,
    "warmup_ratio": float,
    "weight_decay": float,
    "gradient_accumulation_steps": int,
    "clip_norm": float,
}

# BERT's fine-tuning search (Devlin et al., 2018, Appendix A.3).
PAPER_GRID = {
    "learning_rate": (5e-5, 4e-5, 3e-5, 2e-5),
    "batch_size": (16, 32),
    "epochs": (2, 3, 4),
}

SYNTAX_HELP = (
    "'paper' (learning_rate 5e-5,4e-5,3e-5,2e-5 x batch_size 16,32 x epochs 2,3,4), "
    "a grid 'NAME=V1,V2;NAME=V1,...' (e.g. 'learning_rate=3e-5,2e-5;batch_size=16'), "
    "ranges to draw from with --trials N ('learning_rate=1e-5:1e-4:log;epochs=2:4', "
    "mixing with lists allowed), a JSON object of lists (or {\"low\": ..., \"high\": ..., "
    "\"log\": true} ranges), or a .json file holding one; names: " + ", ".join(SEARCHABLE)
)


class SearchSpace:
    """Fine-tuning hyperparameters to search: lists of values, and ranges to draw from.

    A space of lists only is a grid: the search runs every combination. A space with a
    `SearchRange` (or its dict, `{"low": ..., "high": ..., "log": ...}`) is sampled: each
    trial draws its point (Optuna's TPE sampler, lists drawn as choices), as many trials
    as the search is told to run.

    Args:
        grid: a dict from setting names (`SEARCHABLE`: learning_rate, batch_size,
            epochs, warmup_ratio, weight_decay, gradient_accumulation_steps,
            clip_norm) to non-empty sequences of values or to ranges.

    Example:

    >>> space = SearchSpace.parse("learning_rate=3e-5,2e-5;batch_size=16,32")
    >>> len(space.points())
    4
    >>> SearchSpace.parse("learning_rate=1e-5:1e-4:log;batch_size=16,32").sampled
    True
    """

    def __init__(self, grid):
        if not isinstance(grid, dict) or not grid:
            raise ValueError(f"A search grid must be a non-empty mapping. Received: {grid!r}")
        self.grid, self.ranges = {}, {}
        for name, values in grid.items():
            if name not in SEARCHABLE:
                raise ValueError(
                    f"Cannot search over {name!r}: the names are {', '.join(SEARCHABLE)}."
                )
            if isinstance(values, dict):
                values = _range(name, **_range_keywords(name, values))
            if isinstance(values, SearchRange):
                for end in (values.low, values.high):
                    FineTuningConfig(**{name: end})  # Refuses a bad end before any trial.
                self.ranges[name] = values
                continue
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                values = [values]
            values = tuple(_converted(name, value) for value in values)
            if not values:
                raise ValueError(f"The search grid gives no value for {name!r}.")
            if len(set(values)) != len(values):
                raise ValueError(f"The search grid repeats a value of {name!r}: {values}.")
            self.grid[name] = values
        self.names = list(grid)
        for point in itertools.product(*self.grid.values()):
            FineTuningConfig(**dict(zip(self.grid, point)))  # Refuses a bad value early.

    @property
    def sampled(self):
        """Whether the search draws its points (a range is given) rather than runs a grid."""
        return bool(self.ranges)

    @classmethod
    def parse(cls, text):
        """The space `text` describes: "paper", an inline grid, JSON, or a .json file.

        Inline: `NAME=V1,V2,...` items separated by ";" (e.g.
        `learning_rate=5e-5,3e-5;batch_size=16,32`), or `NAME=LOW:HIGH` ranges, with
        `:log` for a log scale (`learning_rate=1e-5:1e-4:log;epochs=2:4`). JSON: an
        object of lists or ranges, `{"learning_rate": {"low": 1e-5, "high": 1e-4,
        "log": true}, "epochs": [2, 3]}`.
        """
        text = str(text).strip()
        if text == "paper":
            return cls(PAPER_GRID)
        if text.endswith(".json") and not text.startswith("{"):
            from kbert.files import read_json

            path = pathlib.Path(text).expanduser()
            return cls(read_json(path, folder=path.parent))
        if text.startswith("{"):
            from kbert.files import parse_json

            try:
                grid = parse_json(text.encode("utf-8", "surrogatepass"), "--search")
            except ValueError as error:
                raise ValueError(f"The search grid is not valid JSON: {error}") from None
            return cls(grid)
        grid = {}
        for item in filter(None, (part.strip() for part in text.split(";"))):
            name, equals, values = item.partition("=")
            name = name.strip().replace("-", "_")
            if not equals or not values.strip():
                raise ValueError(f"Cannot read {item!r} of the search grid: write NAME=V1,V2.")
            if name in grid:
                raise ValueError(f"The search grid names {name!r} twice.")
            if ":" in values:
                grid[name] = _inline_range(name, values)
            else:
                grid[name] = [value.strip() for value in values.split(",")]
        if not grid:
            raise ValueError(f"The search grid is empty. Give {SYNTAX_HELP}.")
        return cls(grid)

    def points(self):
        """Every combination of a grid, as dicts of settings, the first name varying slowest."""
        if self.sampled:
            raise ValueError("A space with ranges has no list of points: a search draws them.")
        names = list(self.grid)
        return [dict(zip(names, values)) for values in itertools.product(*self.grid.values())]

    def draw(self, trial):
        """The point Optuna's `trial` draws (or was given), as a dict of settings."""
        return {
            name: self.ranges[name].draw(trial, name) if name in self.ranges
            else trial.suggest_categorical(name, self.grid[name])
            for name in self.names
        }

    def contains(self, point, partial=False):
        """Whether `point` (a dict of settings, e.g. read back from a journal) is one of
        this space's: the same names (some of them if `partial`), each value on the grid
        or inside its range."""
        if not isinstance(point, dict):
            return False
        if not (set(point) <= set(self.names) if partial else set(point) == set(self.names)):
            return False
        for name, value in point.items():
            if name in self.ranges:
                if not self.ranges[name].contains(value):
                    return False
            elif not any(_same_value(value, item) for item in self.grid[name]):
                return False
        return True

    def to_dict(self):
        return {
            name: self.ranges[name].to_dict() if name in self.ranges else list(self.grid[name])
            for name in self.names
        }

    def __repr__(self):
        return f"SearchSpace({self.to_dict()!r})"


def _inline_range(name, text):
    """`LOW:HIGH` or `LOW:HIGH:log` as a `SearchRange` of `name`'s type."""
    parts = [part.strip() for part in text.split(":")]
    scale = parts.pop() if len(parts) == 3 else "linear"
    if len(parts) != 2 or scale not in ("log", "linear") or "," in text:
        raise ValueError(
            f"Cannot read the range {name}={text!r}: write {name}=LOW:HIGH or LOW:HIGH:log."
        )
    return _range(name, parts[0], parts[1], log=scale == "log")


def _range_keywords(name, mapping):
    keys = set(mapping)
    if not {"low", "high"} <= keys <= {"low", "high", "log"}:
        raise ValueError(
            f"A range of {name!r} is {{\"low\": ..., \"high\": ..., \"log\": false}}. "
            f"Received: {mapping!r}"
        )
    if not isinstance(mapping.get("log", False), bool):
        raise ValueError(f"`log` of the range of {name!r} is true or false. Received: {mapping!r}")
    return mapping


def _range(name, low, high, log=False):
    low, high = _converted(name, low), _converted(name, high)
    try:
        return SearchRange(low, high, log=log)
    except ValueError as error:
        raise ValueError(f"The range of {name!r}: {error}") from None


def _converted(name, value):
    kind = SEARCHABLE[name]
    try:
        if isinstance(value, bool):
            raise ValueError
        if kind is int and isinstance(value, float) and not value.is_integer():
            raise ValueError
        converted = kind(float(value)) if kind is int and isinstance(value, str) else kind(value)
        if kind is int and isinstance(value, str) and float(value) != converted:
            raise ValueError
        return converted
    except (TypeError, ValueError):
        raise ValueError(
            f"`{name}` takes {kind.__name__} values in a search grid. Received: {value!r}"
        ) from None


def _same_value(value, item):
    return type(value) is type(item) and value == item or (
        isinstance(item, float) and isinstance(value, int) and not isinstance(value, bool)
        and float(value) == item
    )
