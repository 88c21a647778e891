"""The attention panel's model view: every layer and head at once, and a pair's segments.

The expected weights come from the backbone's attention-weights model called on the
text alone (no padding), not from `attention_map`, so the view is checked against the
model itself. The tiny model has 3 layers of 2 heads: a layer and a head swapped would
not go unnoticed.
"""

import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QPointF
from PySide6.QtCore import QSettings
from PySide6.QtCore import Qt

from kbert_gui.masked_words.attention_panel import HEAT_MAP
from kbert_gui.masked_words.attention_panel import MODEL_VIEW
from kbert_gui.masked_words.attention_panel import NO_PAIR_HINT
from kbert_gui.masked_words.masked_words_tab import MaskedWordsTab
from kbert_gui.services.app_context import AppContext
from kbert_gui.services.model_store import ModelStore
from kbert_gui.tab_key import TabKey
from gui_helpers import layout_problems
from gui_helpers import open_window_at_minimum_size
from gui_helpers import stop_context
from masked_words_helpers import save_masked_lm_preset

# The first map loads and compiles the model (seconds, more under TensorFlow).
ATTENTION_TIMEOUT_MS = 90000
LAYERS, HEADS = 3, 2
PAIR_TEXT = "the cat sat . [SEP] the dog ran ."
# [CLS] the cat sat . [SEP] | the dog ran . [SEP]
A_LENGTH = 6


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model_view") / "masked_lm"
    return save_masked_lm_preset(folder, 20250, num_layers=LAYERS, num_heads=HEADS)


@pytest.fixture(scope="module")
def model_store(qapp, tmp_path_factory, preset):
    """One store for the module's tabs: the model loads and compiles once per backend."""
    folder = tmp_path_factory.mktemp("model_view_store")
    settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    return ModelStore(preset, settings=settings, cache_dir=folder / "converted")


@pytest.fixture
def tab(qtbot, model_store):
    context = AppContext(model_store)
    tab = MaskedWordsTab(context)
    tab.resize(1100, 760)
    tab.show()
    qtbot.waitExposed(tab)
    yield tab
    tab.close()
    stop_context(context)
    # Deleted now, not later: the shared ModelStore must not reach this tab again.
    shiboken6.delete(tab)


def _show_attention(qtbot, tab, text):
    """Puts `text` in the editor, then shows the attention page; waits for its map.

    Hidden, the panel only remembers the text: showing it computes that text's map alone.
    """
    panel = tab.attention_panel
    results, errors = [], []
    panel.runner.result.connect(results.append)
    panel.runner.error.connect(errors.append)
    tab.editor.setPlainText(text)
    tab.output_tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: bool(results or errors), timeout=ATTENTION_TIMEOUT_MS)
    assert not errors, errors[0]
    assert panel.attention is results[-1].attention
    return panel


def _model_weights(tab, text, pair=None):
    """(layers, heads, L, L) weights of the unpadded input, straight from the backbone."""
    model = tab.context.models.model("BertMaskedLM")
    inputs = model.tokenizer([text], None if pair is None else [pair])
    inputs["padding_mask"] = inputs["padding_mask"].astype("int32")
    outputs = model.backbone.with_attention_weights().predict_on_batch(inputs)
    return np.asarray(outputs["attention_weights"])[0]


def _assert_grid(view, expected):
    """The model view draws `expected[layer][head]`, layer by layer and head by head."""
    maps = view.maps
    assert (len(maps), len(maps[0])) == (LAYERS, HEADS)
    for layer in range(LAYERS):
        for head in range(HEADS):
            np.testing.assert_allclose(maps[layer][head], expected[layer][head], atol=1e-5)


def test_the_model_view_shows_every_layer_and_head(qtbot, tab):
    text = "the cat sat on the [MASK] ."
    panel = _show_attention(qtbot, tab, text)
    panel.set_view(MODEL_VIEW)
    view = panel.model_view
    assert panel.views.currentIndex() == MODEL_VIEW
    # Every layer and head on show: the segment choice in place of the layer and head boxes.
    assert not panel.layer_combo.isVisible() and not panel.head_combo.isVisible()
    assert panel.segment_combo.isVisible()
    expected = _model_weights(tab, text)
    assert expected.shape == (LAYERS, HEADS, 9, 9)
    _assert_grid(view, expected)
    assert view.query_tokens == view.key_tokens == panel.attention.tokens
    image = view.grab().toImage()
    assert image.width() >= view.thumbnail_rect(0, HEADS - 1).right()
    assert image.height() >= view.thumbnail_rect(LAYERS - 1, 0).bottom()

    # Hovering: the layer, head, tokens and weight under the pointer.
    rect = view.thumbnail_rect(2, 1)
    point = QPointF(rect.left() + rect.width() * 2.5 / 9, rect.top() + rect.height() * 1.5 / 9)
    assert view.cell_at(point) == (2, 1, 1, 2)
    assert view.cell_text(2, 1, 1, 2) == (
        f"layer 3 · head 2: the → cat: {expected[2, 1, 1, 2]:.3f}\nClick to open this head."
    )
    gap = QPointF(rect.right() + 2, rect.center().y())
    assert view.cell_at(gap) is None


def test_clicking_a_thumbnail_opens_that_layer_and_head(qtbot, tab):
    text = "the cat sat on the [MASK] ."
    panel = _show_attention(qtbot, tab, text)
    panel.set_view(MODEL_VIEW)
    view = panel.model_view
    with qtbot.waitSignal(view.head_chosen) as chosen:
        qtbot.mouseClick(
            view, Qt.MouseButton.LeftButton, pos=view.thumbnail_rect(1, 0).center().toPoint()
        )
    assert chosen.args == [1, 0]
    assert panel.views.currentIndex() == HEAT_MAP and panel.selection() == (1, 0)
    assert panel.layer_combo.isVisible() and panel.head_combo.isEnabled()
    assert not panel.segment_combo.isVisible()
    np.testing.assert_allclose(panel.heat_map.weights, _model_weights(tab, text)[1, 0], atol=1e-5)


def test_a_pair_shows_how_each_segment_attends_to_the_other(qtbot, tab):
    panel = _show_attention(qtbot, tab, PAIR_TEXT)
    attention = panel.attention
    assert attention.has_pair
    assert attention.segment_ids == (0,) * A_LENGTH + (1,) * 5
    # Read as BERT reads a pair: B in segment 1, not the typed text in segment 0.
    full = _model_weights(tab, "the cat sat . ", " the dog ran .")
    assert not np.allclose(full, _model_weights(tab, PAIR_TEXT), atol=1e-4)

    panel.set_view(MODEL_VIEW)
    view = panel.model_view
    _assert_grid(view, full)
    panel.segment_combo.setCurrentIndex(panel.segment_combo.findText("A → B"))
    assert view.query_tokens == ("[CLS]", "the", "cat", "sat", ".", "[SEP]")
    assert view.key_tokens == ("the", "dog", "ran", ".", "[SEP]")
    _assert_grid(view, full[:, :, :A_LENGTH, A_LENGTH:])
    assert view.legend()[:2] == (
        "rows (attending): [CLS] the cat sat . [SEP]",
        "columns (attended to): the dog ran . [SEP]",
    )
    view.grab()
    panel.segment_combo.setCurrentIndex(panel.segment_combo.findText("B → A"))
    assert view.query_tokens == ("the", "dog", "ran", ".", "[SEP]")
    _assert_grid(view, full[:, :, A_LENGTH:, :A_LENGTH])
    rect = view.thumbnail_rect(0, 1)
    assert view.cell_at(QPointF(rect.left() + 1, rect.bottom() - 1)) == (0, 1, 4, 0)

    # A click opens the whole map of that layer and head.
    qtbot.mouseClick(
        view, Qt.MouseButton.LeftButton, pos=view.thumbnail_rect(2, 1).center().toPoint()
    )
    assert panel.views.currentIndex() == HEAT_MAP and panel.selection() == (2, 1)
    np.testing.assert_allclose(panel.heat_map.weights, full[2, 1], atol=1e-5)


def test_one_sentence_has_no_segments_to_compare(qtbot, tab):
    panel = _show_attention(qtbot, tab, "the cat sat .")
    assert not panel.attention.has_pair
    panel.set_view(MODEL_VIEW)
    panel.segment_combo.setCurrentIndex(panel.segment_combo.findText("A → B"))
    view = panel.model_view
    assert view.maps == [] and view.cell_at(QPointF(100, 60)) is None
    assert view.grab().width() > view.fontMetrics().horizontalAdvance(NO_PAIR_HINT)
    # Back to every token: the grid again.
    panel.segment_combo.setCurrentIndex(panel.segment_combo.findText("all tokens"))
    _assert_grid(view, _model_weights(tab, "the cat sat ."))


def test_every_attention_view_fits_the_window_at_its_minimum_size(qtbot, tmp_path):
    window = open_window_at_minimum_size(qtbot, tmp_path)
    masked_words = window.tab(TabKey.MASKED_WORDS)
    panel = masked_words.attention_panel
    masked_words.output_tabs.setCurrentWidget(panel)
    # The views with the demo model's map of the example text in them.
    qtbot.waitUntil(lambda: panel.attention is not None, timeout=ATTENTION_TIMEOUT_MS)
    for view in range(panel.view_combo.count()):
        panel.set_view(view)
        qtbot.wait(10)
        assert layout_problems(window) == [], panel.view_combo.itemText(view)
    stop_context(window.context, timeout_ms=ATTENTION_TIMEOUT_MS)
