"""A range of values a sampled fine-tuning search draws one setting from."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class SearchRange:
    """The values from `low` to `high`, both included, that a sampled search draws from.

    Integer ends make an integer range (epochs, batch sizes); `log=True` draws evenly on
    a log scale, as learning rates are usually searched.

    Example:

    >>> SearchRange(1e-5, 1e-4, log=True).to_dict()
    {'low': 1e-05, 'high': 0.0001, 'log': True}
    """

    low: float
    high: float
    log: bool = False

    def __post_init__(self):
        if not self.low < self.high:
            raise ValueError(
                f"A search range needs low < high. Received: low={self.low!r}, high={self.high!r}"
            )
        if self.log and self.low <= 0:
            raise ValueError(
                f"A log-scale search range needs low > 0. Received: low={self.low!r}"
            )

    def draw(self, trial, name):
        """The value Optuna's `trial` draws (or was given, for a trial run again)."""
        if isinstance(self.low, int):
            return trial.suggest_int(name, self.low, self.high, log=self.log)
        return trial.suggest_float(name, self.low, self.high, log=self.log)

    def contains(self, value):
        """Whether `value` is a number of this range's type from `low` to `high`."""
        kinds = (int,) if isinstance(self.low, int) else (int, float)
        return (
            isinstance(value, kinds) and not isinstance(value, bool)
            and self.low <= value <= self.high
        )

    def to_dict(self):
        return {"low": self.low, "high": self.high, "log": self.log}
