"""A passage's start/end probability shading, prepared in a worker for `PassageView`."""

import dataclasses

import numpy as np
from PySide6.QtGui import QColor

from kbert_gui.widgets import style

# Start probability tints blue, end probability tints red (both: purple).
START_TINT = style.rgb(style.START_PROBABILITY)
END_TINT = style.rgb(style.END_PROBABILITY)
PAPER = style.rgb(style.PAPER)
# Tokens whose stronger tint is below this (after the square root) stay white.
FAINTEST = 0.05


@dataclasses.dataclass(frozen=True, eq=False)
class PassageShading:
    """Per-token tints of a passage, in Qt's text positions, ready to paint.

    Built by `from_probabilities` off the UI thread, once per answer: the offsets are
    converted to Qt's UTF-16 positions and every token's colour is computed there, so
    the view only looks up the tokens it paints and the one under the mouse.

    Attributes:
        qt_starts: int array (N,): each token's first Qt position, ascending.
        qt_ends: int array (N,): the position after its last character.
        start_probabilities: float array (N,).
        end_probabilities: float array (N,).
        colors: uint8 array (N, 3): the background of each token.
        tinted: bool array (N,): False for tokens too unlikely to show.
        num_windows: how many windows the passage was read in.
    """

    qt_starts: np.ndarray
    qt_ends: np.ndarray
    start_probabilities: np.ndarray
    end_probabilities: np.ndarray
    colors: np.ndarray
    tinted: np.ndarray
    num_windows: int

    @classmethod
    def from_probabilities(cls, probabilities):
        """The shading of a `kbert.inference.SpanProbabilities` (its context's tokens)."""
        text = probabilities.context
        spans = np.asarray(probabilities.spans, dtype=np.int64).reshape(-1, 2)
        # Characters beyond the Basic Multilingual Plane take two UTF-16 units in Qt.
        wide = np.flatnonzero(np.frombuffer(text.encode("utf-32-le"), dtype="<u4") > 0xFFFF)
        qt_spans = spans + np.searchsorted(wide, spans, side="left")
        starts = np.asarray(probabilities.start_probabilities, dtype=np.float64)
        ends = np.asarray(probabilities.end_probabilities, dtype=np.float64)
        # Square roots keep one-in-a-hundred tokens faintly visible next to certain ones.
        start_weight = np.sqrt(np.clip(starts, 0.0, 1.0))[:, None]
        end_weight = np.sqrt(np.clip(ends, 0.0, 1.0))[:, None]
        paper = np.asarray(PAPER, dtype=np.float64)
        colors = (
            paper
            - 0.6 * start_weight * (paper - np.asarray(START_TINT))
            - 0.6 * end_weight * (paper - np.asarray(END_TINT))
        )
        return cls(
            qt_starts=qt_spans[:, 0],
            qt_ends=qt_spans[:, 1],
            start_probabilities=starts,
            end_probabilities=ends,
            colors=np.clip(colors, 0, 255).astype(np.uint8),
            tinted=np.maximum(start_weight, end_weight)[:, 0] >= FAINTEST,
            num_windows=probabilities.num_windows,
        )

    def __len__(self):
        return len(self.qt_starts)

    def probabilities_at(self, position):
        """`(start_probability, end_probability)` of the token at Qt `position`, or None."""
        index = int(np.searchsorted(self.qt_starts, position, side="right")) - 1
        if index < 0 or position >= self.qt_ends[index]:
            return None
        return float(self.start_probabilities[index]), float(self.end_probabilities[index])

    def tinted_between(self, first, last):
        """Indices of the tinted tokens that overlap Qt positions `[first, last]`."""
        low = max(int(np.searchsorted(self.qt_ends, first, side="right")), 0)
        high = int(np.searchsorted(self.qt_starts, last, side="right"))
        return low + np.flatnonzero(self.tinted[low:high])

    def color(self, index):
        return QColor(*(int(channel) for channel in self.colors[index]))
