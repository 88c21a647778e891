"""The model view's white backdrop is its grid's: a long text's legend is cut to the
grid's width (whole in its tooltip), not a backdrop wider than the thumbnails."""

import types

import numpy as np
from PySide6.QtCore import QPointF

from kbert_gui.masked_words.attention_model_view import MARGIN
from kbert_gui.masked_words.attention_model_view import AttentionModelView

LAYERS, HEADS = 2, 2


def _attention(num_tokens):
    tokens = tuple(f"token{index}" for index in range(num_tokens))
    weights = np.full((num_tokens, num_tokens), 1.0 / num_tokens, dtype=np.float32)
    return types.SimpleNamespace(
        tokens=tokens,
        num_layers=LAYERS,
        num_heads=HEADS,
        select=lambda layer, head: weights,
    )


def test_the_backdrop_is_as_wide_as_the_grid(qtbot):
    view = AttentionModelView()
    qtbot.addWidget(view)
    view.set_attention(_attention(60))  # a legend far wider than two thumbnails
    view.show()
    qtbot.waitExposed(view)
    grid_right = view.thumbnail_rect(0, HEADS - 1).right()
    assert view.width() - grid_right <= MARGIN + 1
    assert view.sizeHint().width() - grid_right <= MARGIN + 1


def test_the_cut_legend_is_whole_in_its_tooltip(qtbot):
    view = AttentionModelView()
    qtbot.addWidget(view)
    view.set_attention(_attention(60))
    below = view.thumbnail_rect(LAYERS - 1, 0).bottom() + 10
    line = view.legend_line_at(QPointF(MARGIN + 4, below))
    assert line == view.legend()[0] and line.endswith("token59")
    assert view.legend_line_at(QPointF(MARGIN + 4, MARGIN + 30)) is None
