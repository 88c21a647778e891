"""The run's status line between progress events: what it waits for, and for how long."""

import time

from PySide6.QtCore import QObject
from PySide6.QtCore import QTimer

# How often the seconds shown tick.
TICK_MS = 1000
# A wait for the next step is worth a word once it is this long (seconds) and several
# times the usual step: a new batch length compiles first, an epoch's end evaluates.
SLOW_WAIT_S = 5.0
SLOW_STEPS = 3


class RunPhaseClock(QObject):
    """Writes a run's status line, with the seconds of the current wait ticking.

    Nothing else moves while a model loads, while the first step compiles (over a
    minute on a loaded machine), or while a batch of a new length compiles later: the
    line says what the run waits for and for how long, so the view never looks frozen.
    `wait(text)` shows "text 12 s", counting from now; `stepping(...)` shows the line
    of the latest step, and once the next one is slow in coming (`SLOW_WAIT_S` and
    `SLOW_STEPS` step times), what it waits for and since when; `stop()` leaves the
    line to whoever writes it next.

    Args:
        label: the `QLabel` of the status line.
        clock: seconds from any origin (`time.monotonic`); tests pass their own.
        parent: the owning QObject.
    """

    def __init__(self, label, clock=time.monotonic, parent=None):
        super().__init__(parent)
        self.label = label
        self._clock = clock
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.render)
        self._text = ""
        self._since = 0.0
        self._next = None  # (step awaited, seconds per step or None, evaluating)

    @property
    def running(self):
        return self.timer.isActive()

    def wait(self, text):
        """Shows `text` with the seconds from now: "Loading the model… 12 s"."""
        self._text, self._since, self._next = text, self._clock(), None
        self._start()

    def stepping(self, text, next_step, seconds_per_step=None, evaluating=False):
        """Shows `text` (the latest step's line); if step `next_step` is slow in coming,
        what the run waits for: the epoch's evaluation (`evaluating`) or the step."""
        self._text, self._since = text, self._clock()
        self._next = (next_step, seconds_per_step, evaluating)
        self._start()

    def stop(self):
        self.timer.stop()

    def _start(self):
        if not self.timer.isActive():
            self.timer.start()
        self.render()

    def render(self):
        """Writes the line as it is now (the timer calls it every second)."""
        self.label.setText(self.line())

    def line(self):
        """The status line now: the text, and the wait's seconds where they matter."""
        waited = max(self._clock() - self._since, 0.0)
        if self._next is None:
            return f"{self._text} {waited:.0f} s"
        step, per_step, evaluating = self._next
        if waited < SLOW_WAIT_S or (per_step is not None and waited < SLOW_STEPS * per_step):
            return self._text
        return f"{self._text} · {slow_step_note(step, evaluating)} {waited:.0f} s"


def slow_step_note(step, evaluating):
    """Why the next step is slow in coming, as far as the app can tell."""
    if evaluating:
        return "evaluating the epoch and saving the model…"
    return f"step {step} is taking a while (a batch of a new length compiles first)…"
