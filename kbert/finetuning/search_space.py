"""The grid a fine-tuning search runs: hyperparameter values, and how a user writes them."""

import itertools
import json
import pathlib

from kbert.finetuning.fine_tuning_config import FineTuningConfig

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
    "a JSON object of lists, or a .json file holding one; names: " + ", ".join(SEARCHABLE)
)


class SearchSpace:
    """A grid of fine-tuning hyperparameters: every combination of the values given.

    Args:
        grid: a dict from setting names (`SEARCHABLE`: learning_rate, batch_size,
            epochs, warmup_ratio, weight_decay, gradient_accumulation_steps,
            clip_norm) to non-empty sequences of values.

    Example:

    >>> space = SearchSpace.parse("learning_rate=3e-5,2e-5;batch_size=16,32")
    >>> len(space.points())
    4
    """

    def __init__(self, grid):
        if not isinstance(grid, dict) or not grid:
            raise ValueError(f"A search grid must be a non-empty mapping. Received: {grid!r}")
        self.grid = {}
        for name, values in grid.items():
            if name not in SEARCHABLE:
                raise ValueError(
                    f"Cannot search over {name!r}: the names are {', '.join(SEARCHABLE)}."
                )
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                values = [values]
            values = tuple(_converted(name, value) for value in values)
            if not values:
                raise ValueError(f"The search grid gives no value for {name!r}.")
            if len(set(values)) != len(values):
                raise ValueError(f"The search grid repeats a value of {name!r}: {values}.")
            self.grid[name] = values
        for point in self.points():
            FineTuningConfig(**point)  # Refuses a bad value before any trial runs.

    @classmethod
    def parse(cls, text):
        """The space `text` describes: "paper", an inline grid, JSON, or a .json file.

        Inline: `NAME=V1,V2,...` items separated by ";" (e.g.
        `learning_rate=5e-5,3e-5;batch_size=16,32`). JSON: an object of lists,
        `{"learning_rate": [5e-5, 3e-5], "epochs": [2, 3]}`.
        """
        text = str(text).strip()
        if text == "paper":
            return cls(PAPER_GRID)
        if text.endswith(".json") and not text.startswith("{"):
            from kbert.files import read_json

            path = pathlib.Path(text).expanduser()
            return cls(read_json(path, folder=path.parent))
        if text.startswith("{"):
            try:
                return cls(json.loads(text))
            except json.JSONDecodeError as error:
                raise ValueError(f"The search grid is not valid JSON: {error}") from None
        grid = {}
        for item in filter(None, (part.strip() for part in text.split(";"))):
            name, equals, values = item.partition("=")
            name = name.strip().replace("-", "_")
            if not equals or not values.strip():
                raise ValueError(f"Cannot read {item!r} of the search grid: write NAME=V1,V2.")
            if name in grid:
                raise ValueError(f"The search grid names {name!r} twice.")
            grid[name] = [value.strip() for value in values.split(",")]
        if not grid:
            raise ValueError(f"The search grid is empty. Give {SYNTAX_HELP}.")
        return cls(grid)

    def points(self):
        """Every combination, as dicts of settings, the first name varying slowest."""
        names = list(self.grid)
        return [dict(zip(names, values)) for values in itertools.product(*self.grid.values())]

    def to_dict(self):
        return {name: list(values) for name, values in self.grid.items()}

    def __repr__(self):
        return f"SearchSpace({self.to_dict()!r})"


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
