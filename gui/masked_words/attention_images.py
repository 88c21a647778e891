"""Attention weights as pixels: one pixel per (query, key) cell, white 0 to dark blue 1."""

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtGui import QImage

from kbert_gui.widgets import style

# Colour of weight 1; 0 is white.
HOT = QColor(style.ATTENTION)


def weights_image(weights):
    """A (K x Q)-pixel `QImage` of (Q, K) weights in [0, 1] (Q queries, K keys; square
    for a whole map), on a square-root scale (the many small weights of a row stay
    distinguishable).

    Vectorised: an image of 128 tokens costs well under a millisecond, so views can
    make one per head on the UI thread.
    """
    weights = np.asarray(weights, dtype=np.float32)
    rows, columns = weights.shape
    strength = np.sqrt(np.clip(weights, 0.0, 1.0))[..., None]  # (Q, K, 1)
    hot = np.array([HOT.blue(), HOT.green(), HOT.red()], dtype=np.float32)  # BGRA in memory
    channels = np.rint(255.0 + (hot - 255.0) * strength).astype(np.uint8)  # (Q, K, 3)
    pixels = np.concatenate([channels, np.full((rows, columns, 1), 255, np.uint8)], axis=-1)
    data = np.ascontiguousarray(pixels).tobytes()
    return QImage(data, columns, rows, 4 * columns, QImage.Format.Format_RGB32).copy()
