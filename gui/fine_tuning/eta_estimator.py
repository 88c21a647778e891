"""Time left in a training run, from the timing of its recent steps."""

import collections
import statistics

# Recent step intervals the estimate looks at: enough to smooth noise, few enough to
# follow a change of pace (say, after the first epoch's compilation).
WINDOW = 20


class EtaEstimator:
    """Estimates the seconds left from when the latest steps finished.

    The first step of a run (or of a resumed run) includes compilation, so the
    estimate starts at the second one. The median of the last `WINDOW` step
    intervals is robust to the odd slow step (evaluation and checkpoints at epoch
    ends).

    Example:

    >>> eta = EtaEstimator()
    >>> eta.start(total_steps=100)
    >>> for step, now in [(1, 5.0), (2, 5.5), (3, 6.0)]:
    ...     eta.step_done(step, now)
    >>> eta.seconds_left()
    48.5
    """

    def __init__(self):
        self.total_steps = 0
        self._last = None
        self._intervals = collections.deque(maxlen=WINDOW)
        self.step = 0

    def start(self, total_steps):
        self.total_steps = int(total_steps)
        self._last = None
        self._intervals.clear()
        self.step = 0

    def step_done(self, step, time):
        """Step `step` (counted from 1 over the run) finished at `time` (seconds)."""
        if self._last is not None and step > self._last[0]:
            self._intervals.append((time - self._last[1]) / (step - self._last[0]))
        self._last = (step, time)
        self.step = step

    def seconds_per_step(self):
        """The median recent step time, or None before two steps."""
        return statistics.median(self._intervals) if self._intervals else None

    def seconds_left(self):
        """Estimated seconds until the last step, or None before two steps."""
        per_step = self.seconds_per_step()
        if per_step is None:
            return None
        return max(self.total_steps - self.step, 0) * per_step


def format_duration(seconds):
    """`"1:05:09"`, `"4:05"` or `"0:07"` for a number of seconds."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
