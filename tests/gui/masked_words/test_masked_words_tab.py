"""The "Masked words" tab: predictions as you type, masks, targets, attention, comparison.

The tabs of one module share a `ModelStore` (fresh `AppContext` and tab per test), so each
tiny model is loaded and compiled once per backend.
"""

import csv
import json
import threading
import types

import keras
import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QEvent
from PySide6.QtCore import QPoint
from PySide6.QtCore import QPointF
from PySide6.QtCore import QSettings
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtGui import QMouseEvent
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication

from kbert_gui.services.app_context import AppContext
from kbert_gui.masked_words.attention_panel import ALL_HEADS
from kbert_gui.masked_words.attention_panel import HEAD_VIEW
from kbert_gui.masked_words.attention_panel import HEAT_MAP
from kbert_gui.masked_words.attention_panel import MODEL_VIEW
from kbert_gui.masked_words.masked_words_tab import MaskedWordsTab
from kbert_gui.masked_words.fill_mask_outcome import FillMaskOutcome
from kbert_gui.masked_words.mask_prediction_model import DIFFERENT_BACKGROUND
from kbert_gui.masked_words.mask_prediction_model import PREDICTION_ROLE
from kbert_gui.masked_words.mask_prediction_model import PROBABILITY_ROLE
from kbert_gui.masked_words.mask_prediction_model import MaskPredictionModel
from kbert_gui.masked_words.masked_text_edit import MaskedTextEdit
from kbert_gui.masked_words.masked_text_edit import word_span
from kbert_gui.services.model_store import ModelStore
from kbert_gui.widgets.probability_text import probability_text
from gui_helpers import FROZEN_WINDOW_MS
from gui_helpers import Heartbeat
from gui_helpers import record_threads
from gui_helpers import make_context
from gui_helpers import stop_context
from kbert.inference import MaskFill
from kbert.inference import MaskPrediction
from kbert.inference import attention_map
from kbert.inference import score_words
from fine_tuning_data import TINY_MODEL
from fine_tuning_data import VOCABULARY
from masked_words_helpers import save_masked_lm_preset

# First predictions load and compile the model (seconds, more under TensorFlow).
PREDICTION_TIMEOUT_MS = 90000


@pytest.fixture(scope="module")
def presets(tmp_path_factory):
    """A tiny `BertMaskedLM` preset (standing in for a pretrained one) and a preset of
    its backbone alone, whose masked-LM head therefore starts at random."""
    from kbert.models import BertBackbone
    from kbert.models import BertMaskedLM
    from kbert.tokenizer import BertTokenizer

    # Seeded here: module fixtures run before the per-test seed reset of conftest.py.
    keras.utils.set_random_seed(20240)
    base = tmp_path_factory.mktemp("masked_words_presets")
    tokenizer = BertTokenizer(list(VOCABULARY), lowercase=True, max_length=64)
    backbone = BertBackbone(**dict(TINY_MODEL, vocabulary_size=len(VOCABULARY)))
    backbone.save_to_preset(base / "backbone_only", tokenizer=tokenizer)
    BertMaskedLM(backbone).save_to_preset(base / "masked_lm", tokenizer=tokenizer)
    return types.SimpleNamespace(
        masked_lm=str(base / "masked_lm"), backbone_only=str(base / "backbone_only")
    )


@pytest.fixture(scope="module")
def wide_preset(tmp_path_factory):
    """A masked-LM preset of 12 heads that reads 160 tokens (for a 128-token text)."""
    folder = tmp_path_factory.mktemp("wide_preset") / "wide"
    return save_masked_lm_preset(
        folder,
        20241,
        max_length=160,
        hidden_size=48,
        num_heads=12,
        intermediate_size=64,
        max_positions=160,
    )


@pytest.fixture(scope="module")
def model_store(qapp, tmp_path_factory, presets):
    folder = tmp_path_factory.mktemp("masked_words_store")
    settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    return ModelStore(presets.masked_lm, settings=settings, cache_dir=folder / "converted")


def _open(qtbot, context):
    tab = MaskedWordsTab(context)
    tab.resize(1000, 720)
    tab.show()
    qtbot.waitExposed(tab)
    return tab


def _close(tab, context):
    tab.close()
    stop_context(context)
    # Deleted now, not later: the shared ModelStore must not reach this tab again.
    shiboken6.delete(tab)


@pytest.fixture
def masked_words(qtbot, model_store, presets):
    model_store.set_source(presets.masked_lm)
    context = AppContext(model_store)
    tab = _open(qtbot, context)
    yield tab
    _close(tab, context)


def _model(store, source=None):
    # Safe here: the test calls it while no worker runs.
    return store.model("BertMaskedLM", source)


def _predict(qtbot, runner, action):
    """Does `action` and waits for `runner`'s next result; fails on an error."""
    results, errors = [], []
    runner.result.connect(results.append)
    runner.error.connect(errors.append)
    action()
    qtbot.waitUntil(lambda: bool(results or errors), timeout=PREDICTION_TIMEOUT_MS)
    assert not errors, errors[0]
    return results[-1]


def _type(qtbot, tab, text):
    tab.editor.clear()
    tab.editor.setFocus()
    qtbot.keyClicks(tab.editor, text)


def _set_text(tab, text):
    tab.editor.setPlainText(text)


def _shown_tokens(view, index):
    model = view.model(index)
    return [model.index(row, 0).data() for row in range(model.rowCount())]


def _shown_probabilities(view, index):
    model = view.model(index)
    return [model.index(row, 1).data(PROBABILITY_ROLE) for row in range(model.rowCount())]


def _a_word_row(model):
    """A row whose token is a word: a random model may rank "[MASK]" or "[CLS]" high,
    and putting "[MASK]" in place of "[MASK]" would leave the text as it was."""
    return next(
        row for row in range(model.rowCount()) if not model.prediction(row).token.startswith("[")
    )


def _click_row(qtbot, table, row):
    rect = table.visualRect(table.model().index(row, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _assert_shows(view, expected):
    """The view lists exactly `expected` (a FillMaskResult), mask by mask."""
    assert view.mask_count() == len(expected.masks)
    for index, mask in enumerate(expected.masks):
        # The title may go on to say that the compared model's top differs.
        assert view.mask_title(index).startswith(f"mask {index + 1} at chars {mask.start}–{mask.end}")
        assert _shown_tokens(view, index) == [c.token for c in mask.candidates]
        np.testing.assert_allclose(
            _shown_probabilities(view, index), [c.probability for c in mask.candidates], atol=1e-6
        )


def _check_top_k_and_click_to_fill(qtbot, tab, text):
    outcome = _predict(qtbot, tab.controller.runner, lambda: _type(qtbot, tab, text))
    assert outcome.result.text == text and tab.text == text
    expected = _model(tab.context.models).fill_mask(text, top_k=5)
    (mask,) = expected.masks
    assert text[mask.start : mask.end] == "[MASK]"
    _assert_shows(tab.predictions_view, expected)
    assert tab.predictions_view.table(0).model().rowCount() == 5

    row = _a_word_row(tab.predictions_view.model(0))
    _click_row(qtbot, tab.predictions_view.table(0), row)
    assert tab.text == mask.candidates[row].text != text
    # The one mask is filled: nothing left to predict.
    assert tab.predictions_view.hint.startswith("Type [MASK]")


# --- Acceptance ------------------------------------------------------------------------------


def test_masked_words_shows_the_demo_models_top_k_and_clicking_fills_it_in(qtbot, tmp_path):
    # Needs the bundled "demo" preset (kbert.presets.BUILTIN_PRESETS["demo"]).
    context = make_context(tmp_path, "demo")
    tab = _open(qtbot, context)
    try:
        _check_top_k_and_click_to_fill(qtbot, tab, "The capital of France is [MASK].")
    finally:
        _close(tab, context)


def test_masked_words_shows_a_presets_top_k_and_clicking_fills_it_in(qtbot, masked_words):
    assert masked_words.windowTitle() == "Masked words"
    assert masked_words.top_k_spin.value() == 5
    _check_top_k_and_click_to_fill(qtbot, masked_words, "the cat sat on the [MASK] .")
    assert not masked_words.predictions_view.warning


# --- Type as you go ----------------------------------------------------------------------------


def test_typing_runs_one_prediction_after_the_pause(qtbot, masked_words, monkeypatch):
    texts = []
    original = FillMaskOutcome.compute.__func__

    def counting(cls, models, source, text, top_k, targets=None):
        texts.append(text)
        return original(cls, models, source, text, top_k, targets)

    monkeypatch.setattr(FillMaskOutcome, "compute", classmethod(counting))
    outcome = _predict(qtbot, masked_words.controller.runner, lambda: _type(qtbot, masked_words, "a [MASK] sat ."))
    qtbot.wait(400)  # longer than the debounce pause: nothing else starts
    assert texts == ["a [MASK] sat ."]
    assert outcome.result.text == "a [MASK] sat ."
    assert masked_words.predictions_view.mask_title(0) == "mask 1 at chars 2–8"


def test_a_superseded_request_is_never_shown(qtbot, masked_words, monkeypatch):
    stale = "the [MASK] sat ."
    latest = "[MASK] cat sat on the [MASK] ."
    entered, release = threading.Event(), threading.Event()
    original = FillMaskOutcome.compute.__func__

    def gated(cls, models, source, text, top_k, targets=None):
        if text == stale:
            entered.set()
            release.wait(30)
        return original(cls, models, source, text, top_k, targets)

    monkeypatch.setattr(FillMaskOutcome, "compute", classmethod(gated))
    shown = []
    masked_words.controller.runner.result.connect(shown.append)
    _set_text(masked_words, stale)
    qtbot.waitUntil(entered.is_set, timeout=10000)  # the stale request is running

    def supersede_then_release():
        _set_text(masked_words, latest)
        release.set()

    _predict(qtbot, masked_words.controller.runner, supersede_then_release)
    assert [outcome.result.text for outcome in shown] == [latest]
    assert masked_words.predictions_view.outcome.text == latest
    assert [masked_words.predictions_view.mask_title(i) for i in range(2)] == [
        "mask 1 at chars 0–6",
        "mask 2 at chars 22–28",
    ]


def test_text_without_a_mask_shows_the_hint(qtbot, masked_words, monkeypatch):
    calls = []
    monkeypatch.setattr(FillMaskOutcome, "compute", classmethod(lambda *args: calls.append(args)))
    _set_text(masked_words, "the cat sat .")
    qtbot.wait(400)
    assert calls == []
    assert masked_words.predictions_view.mask_count() == 0
    assert masked_words.predictions_view.hint.startswith("Type [MASK] or double-click a word")


# --- Masks -------------------------------------------------------------------------------------


def test_insert_mask_button_and_shortcut(qtbot, masked_words):
    editor = masked_words.editor
    _set_text(masked_words, "the cat sat")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.mouseClick(masked_words.insert_mask_button, Qt.MouseButton.LeftButton)
    assert editor.toPlainText() == "the cat sat [MASK]"

    cursor = editor.textCursor()
    cursor.setPosition(3)
    editor.setTextCursor(cursor)
    masked_words.activateWindow()
    qtbot.waitActive(masked_words)
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert editor.toPlainText() == "the [MASK] cat sat [MASK]"

    # Over a selection, the mask replaces the selected word.
    cursor.setPosition(15)
    cursor.setPosition(18, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    assert cursor.selectedText() == "sat"
    qtbot.mouseClick(masked_words.insert_mask_button, Qt.MouseButton.LeftButton)
    assert editor.toPlainText() == "the [MASK] cat [MASK] [MASK]"


def test_double_clicking_a_word_masks_it(qtbot, masked_words):
    editor = masked_words.editor
    _set_text(masked_words, "The cat sat on the mat.")

    def double_click(index):
        cursor = QTextCursor(editor.document())
        cursor.setPosition(index)
        point = editor.cursorRect(cursor).center()
        point.setX(point.x() + 2)  # inside the character after the position
        qtbot.mouseDClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=point)

    double_click(9)  # inside "sat"
    assert editor.toPlainText() == "The cat [MASK] on the mat."
    double_click(11)  # on the [MASK]: it stays as it is
    assert editor.toPlainText() == "The cat [MASK] on the mat."
    assert "double-click a word" in editor.toolTip()


def test_word_spans_and_utf16_positions(qapp):
    text = "😀 naïve cat [MASK]."
    assert word_span(text, 3) == (2, 7)
    assert word_span(text, 1) is None  # a space
    assert word_span(text, text.index("MASK")) is None
    editor = MaskedTextEdit()
    editor.setPlainText(text)
    # The emoji is two UTF-16 units in Qt but one character in Python.
    assert editor.mask_word_at(9) == (8, 11)
    assert editor.toPlainText() == "😀 naïve [MASK] [MASK]."
    editor.replace_span(8, 14, "dog")
    assert editor.toPlainText() == "😀 naïve dog [MASK]."
    editor.deleteLater()


def test_several_masks_get_one_list_each(qtbot, masked_words, model_store):
    text = "the [MASK] sat on the [MASK] ."
    _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    expected = _model(model_store).fill_mask(text, top_k=5)
    _assert_shows(masked_words.predictions_view, expected)
    assert masked_words.predictions_view.mask_title(1) == "mask 2 at chars 22–28"

    # A prediction for the second mask fills that mask only.
    row = _a_word_row(masked_words.predictions_view.model(1))
    second = expected.masks[1].candidates[row]
    outcome = _predict(
        qtbot, masked_words.controller.runner, lambda: _click_row(qtbot, masked_words.predictions_view.table(1), row)
    )
    assert masked_words.text == second.text
    assert masked_words.predictions_view.mask_count() == 1
    assert masked_words.predictions_view.mask_title(0) == "mask 1 at chars 4–10"
    assert outcome.result.text == second.text


def test_top_k_and_scoring_named_words(qtbot, masked_words, model_store):
    text = "the [MASK] sat ."
    _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    _predict(qtbot, masked_words.controller.runner, lambda: masked_words.top_k_spin.setValue(2))
    assert masked_words.predictions_view.model(0).rowCount() == 2

    _predict(qtbot, masked_words.controller.runner, lambda: masked_words.targets_edit.setText("cat, dog , ,mat"))
    assert masked_words.targets() == ["cat", "dog", "mat"]
    expected = _model(model_store).fill_mask(text, top_k=3, targets=["cat", "dog", "mat"])
    # Every named word is listed with its probability, most probable first.
    _assert_shows(masked_words.predictions_view, expected)

    # "amsterdam" is two word pieces: scored whole, the product of its pieces'
    # probabilities; "Paris" and "paris" are one word to this uncased model: both listed,
    # with one score, and a note says so.
    outcome = _predict(
        qtbot, masked_words.controller.runner, lambda: masked_words.targets_edit.setText("cat, amsterdam, Paris, paris")
    )
    (mask,) = score_words(_model(model_store), None, text, ["cat", "amsterdam", "Paris", "paris"])
    model = masked_words.predictions_view.model(0)
    shown = {model.prediction(row).word: model.prediction(row) for row in range(model.rowCount())}
    assert sorted(shown) == ["Paris", "amsterdam", "cat", "paris"]
    for score in mask.scores:
        assert shown[score.word].probability == pytest.approx(score.probability, abs=1e-6)
    assert shown["amsterdam"].pieces == ("amster", "##dam")
    assert shown["Paris"].probability == shown["paris"].probability
    probabilities = [model.index(row, 1).data(PROBABILITY_ROLE) for row in range(4)]
    assert probabilities == sorted(probabilities, reverse=True)
    assert "product of its 2 pieces' probabilities" in model.index(
        [row for row in range(4) if model.prediction(row).word == "amsterdam"][0], 0
    ).data(Qt.ItemDataRole.ToolTipRole)
    assert masked_words.predictions_view.note == (
        "“Paris” and “paris” are the same to this model (paris): one score, shown for each."
    )
    assert masked_words.predictions_view.error_banner.message == ""
    # A click puts the word itself into the text.
    row = [row for row in range(4) if model.prediction(row).word == "amsterdam"][0]
    _click_row(qtbot, masked_words.predictions_view.table(0), row)
    assert masked_words.text == "the amsterdam sat ."

    masked_words.targets_edit.clear()
    _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    assert masked_words.predictions_view.error_banner.message == ""
    assert masked_words.predictions_view.model(0).rowCount() == 2
    assert masked_words.predictions_view.note == ""


def test_a_text_longer_than_the_model_reads_is_cut_with_a_note(qtbot, masked_words, model_store):
    limit = 64  # the tiny model's positions
    long_text = "the [MASK] sat on the mat . " + "the cat ran . " * 30
    outcome = _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, long_text))
    tokens = len(_model(model_store).tokenizer.tokenize(long_text)) + 2
    assert outcome.num_tokens == tokens > limit and outcome.limit == limit
    note = (
        f"The text is {tokens} tokens long; the model reads the first {limit}, so the "
        "predictions leave out the rest."
    )
    assert masked_words.predictions_view.note == note
    assert masked_words.predictions_view.mask_count() == 1

    # The attention of the same text: cut at the same place, with the same note.
    panel = masked_words.attention_panel
    _predict(qtbot, panel.runner, lambda: masked_words.output_tabs.setCurrentWidget(panel))
    assert len(panel.heat_map.tokens) == limit
    assert panel.note_label.text() == note.replace("predictions", "weights")

    # A mask beyond the limit: how long the text is and what the limit is, not the text.
    errors = []
    masked_words.controller.runner.error.connect(errors.append)
    _set_text(masked_words, long_text + " and the [MASK] .")
    qtbot.waitUntil(lambda: bool(errors), timeout=PREDICTION_TIMEOUT_MS)
    message = masked_words.predictions_view.error_banner.message
    assert message == (
        f"The text is {tokens + 4} tokens long and the model reads at most {limit}: 1 of "
        "its 2 [MASK]s comes after that. Shorten the text or move the masks earlier."
    )


# --- Attention ---------------------------------------------------------------------------------


def test_attention_heat_map_shows_the_chosen_layer_and_head(qtbot, masked_words, model_store):
    panel = masked_words.attention_panel
    text = "the cat sat on the [MASK] ."
    _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    # Hidden, the panel computes nothing.
    assert panel.runner.generation == 0 and panel.attention is None

    _predict(qtbot, panel.runner, lambda: masked_words.output_tabs.setCurrentWidget(panel))
    expected = attention_map(_model(model_store), None, text)
    assert panel.heat_map.tokens == expected.tokens
    layers = [panel.layer_combo.itemText(index) for index in range(3)]
    assert layers == ["layer 1", "layer 2", "average of layers"]
    assert panel.head_combo.count() == 5 and panel.head_combo.currentText() == "average of heads"

    panel.layer_combo.setCurrentIndex(1)
    panel.head_combo.setCurrentIndex(2)
    assert panel.selection() == (1, 2)
    np.testing.assert_allclose(panel.heat_map.weights, expected.select(1, 2), atol=1e-5)
    panel.layer_combo.setCurrentIndex(2)
    assert panel.selection() == (None, 2)
    np.testing.assert_allclose(panel.heat_map.weights, expected.select(None, 2), atol=1e-5)
    panel.heat_map.grab()  # paints without error

    # Visible, it follows the text (keeping the chosen layer and head).
    _predict(qtbot, panel.runner, lambda: _set_text(masked_words, "a dog ran ."))
    assert panel.heat_map.tokens == ("[CLS]", "a", "dog", "ran", ".", "[SEP]")
    assert panel.selection() == (None, 2)


def _mouse_move(widget, point):
    """The pointer moves over `widget` to `point` (mouse tracking is on there)."""
    event = QMouseEvent(
        QEvent.Type.MouseMove,
        QPointF(point),
        QPointF(widget.mapToGlobal(point)),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, event)


def test_every_head_of_a_layer_and_the_head_view(qtbot, masked_words, model_store):
    panel = masked_words.attention_panel
    text = "the cat sat on the [MASK] ."
    _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    _predict(qtbot, panel.runner, lambda: masked_words.output_tabs.setCurrentWidget(panel))
    expected = attention_map(_model(model_store), None, text)

    # All heads of layer 2: one thumbnail each, the head box has nothing to choose.
    panel.layer_combo.setCurrentIndex(1)
    panel.set_view(ALL_HEADS)
    grid = panel.head_grid
    assert len(grid.maps) == expected.num_heads == 4 and not panel.head_combo.isEnabled()
    for head, weights in enumerate(grid.maps):
        np.testing.assert_allclose(weights, expected.select(1, head), atol=1e-5)
    grid.grab()
    # A click on head 3 enlarges it: the heat map of layer 2, head 3.
    qtbot.mouseClick(
        grid, Qt.MouseButton.LeftButton, pos=grid.thumbnail_rect(2).center().toPoint()
    )
    assert panel.views.currentIndex() == HEAT_MAP and panel.selection() == (1, 2)
    np.testing.assert_allclose(panel.heat_map.weights, expected.select(1, 2), atol=1e-5)

    # The head view of the same head: lines from each token to those it attends to.
    panel.set_view(HEAD_VIEW)
    view = panel.head_view
    np.testing.assert_allclose(view.weights, expected.select(1, 2), atol=1e-5)
    view.grab()
    _mouse_move(view, QPoint(20, 10 + 2 * 20 + 10))  # over "cat" on the left
    assert view.focus == ("query", 2)
    weights = expected.select(1, 2)[2]
    listed = view.weights_text("query", 2).splitlines()
    best = int(np.argmax(weights))
    assert listed[0] == "cat attends to:"
    assert listed[1] == f"  {expected.tokens[best]}: {weights[best]:.3f}"
    view.grab()  # the hovered token's lines only
    _mouse_move(view, QPoint(view.width() - 10, 10 + 5))  # over [CLS] on the right
    assert view.focus == ("key", 0)


@pytest.mark.timing
def test_the_views_of_a_128_token_text_keep_the_window_responsive(qtbot, tmp_path, wide_preset):
    context = make_context(tmp_path, wide_preset)
    tab = _open(qtbot, context)
    try:
        panel = tab.attention_panel
        text = "the cat sat on the [MASK] . " * 18  # 126 tokens, 128 with [CLS] and [SEP]
        _set_text(tab, text)
        report = _predict(qtbot, panel.runner, lambda: tab.output_tabs.setCurrentWidget(panel))
        assert len(report.attention.tokens) == 128 and report.attention.num_heads == 12
        heartbeat = Heartbeat()
        heartbeat.start()
        views = (
            (ALL_HEADS, panel.head_grid),
            (HEAD_VIEW, panel.head_view),
            (MODEL_VIEW, panel.model_view),
        )
        for view, widget in views:
            panel.set_view(view)
            for layer in range(panel.layer_combo.count()):
                panel.layer_combo.setCurrentIndex(layer)
                widget.grab()
                qtbot.wait(30)
        _mouse_move(panel.head_view, QPoint(20, 10 + 60 * 20 + 10))
        panel.head_view.grab()
        panel.set_view(HEAT_MAP)
        panel.heat_map.grab()
        qtbot.wait(30)
        heartbeat.stop()
        assert heartbeat.max_gap_ms < FROZEN_WINDOW_MS  # benchmarks/gui_heartbeat.py measures
    finally:
        _close(tab, context)


# --- Two models --------------------------------------------------------------------------------


def test_comparison_shows_the_second_models_predictions(qtbot, masked_words, model_store, presets):
    pane = masked_words.comparison_pane
    text = "the dog ran to [MASK] ."
    _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    assert pane.view.hint.startswith("Compare with a second model")

    def compare():
        pane.source_edit.setText(presets.backbone_only)
        qtbot.mouseClick(pane.compare_button, Qt.MouseButton.LeftButton)

    outcome = _predict(qtbot, pane.runner, compare)
    assert pane.comparison_source == presets.backbone_only
    assert outcome.source == presets.backbone_only
    _assert_shows(pane.view, _model(model_store, presets.backbone_only).fill_mask(text, top_k=5))
    _assert_shows(masked_words.predictions_view, _model(model_store).fill_mask(text, top_k=5))
    # Its masked-LM head was initialised at random: said so, next to its predictions only.
    assert "predictions are random" in pane.view.warning
    assert masked_words.predictions_view.warning == ""

    # A click in the second model's list fills the text too; both re-predict.
    row = _a_word_row(pane.view.model(0))
    candidate = pane.view.model(0).prediction(row)
    _click_row(qtbot, pane.view.table(0), row)
    assert masked_words.text == candidate.text
    assert pane.view.hint.startswith("Type [MASK]")
    assert masked_words.predictions_view.hint.startswith("Type [MASK]")

    pane.stop_button.click()
    assert pane.comparison_source is None and pane.view.mask_count() == 0


def test_the_comparison_menu_offers_only_built_in_models_that_fill_masks(masked_words):
    from kbert.presets import BUILTIN_PRESETS

    pane = masked_words.comparison_pane
    pane._fill_recent_menu()
    offered = {action.text() for action in pane.recent_menu.actions()}
    assert {"demo", "demo-tiny"} <= offered
    # The bundled task models share demo's encoder but have no masked-LM head.
    assert "demo-spam" in BUILTIN_PRESETS and "demo-spam" not in offered


def test_the_comparison_marks_where_the_two_models_differ(qtbot, masked_words, presets):
    pane = masked_words.comparison_pane
    text = "the [MASK] sat on the [MASK] ."
    _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    _predict(qtbot, pane.runner, lambda: pane.set_comparison_source(presets.backbone_only))
    first, second = masked_words.predictions_view.outcome, pane.view.outcome
    differing = []
    for index, (mine, theirs) in enumerate(zip(first.masks, second.masks)):
        differs = mine.candidates[0].token != theirs.candidates[0].token
        for view, shown, other in (
            (masked_words.predictions_view, mine, theirs),
            (pane.view, theirs, mine),
        ):
            assert (index in view.differing_masks()) == differs
            assert view.mask_title(index).endswith("the other model's top differs") == differs
            model = view.model(index)
            unshared = {c.token for c in shown.candidates} - {c.token for c in other.candidates}
            assert {model.prediction(row).token for row in model.unshared_rows()} == unshared
            for row in range(model.rowCount()):
                background = model.index(row, 0).data(Qt.ItemDataRole.BackgroundRole)
                assert (background is not None) == (row in model.unshared_rows())
                if background is not None:
                    assert background.color() == DIFFERENT_BACKGROUND
        differing.append(differs)
    assert any(differing)  # a random head against a trained one

    # The same model twice: nothing differs. Stopping clears the marks.
    _predict(qtbot, pane.runner, lambda: pane.set_comparison_source(masked_words.context.models.source))
    assert masked_words.predictions_view.differing_masks() == pane.view.differing_masks() == []
    assert masked_words.predictions_view.model(0).unshared_rows() == []
    pane.set_comparison_source(presets.backbone_only)
    _predict(qtbot, pane.runner, lambda: None)
    assert masked_words.predictions_view.differing_masks()
    pane.stop_button.click()
    assert masked_words.predictions_view.differing_masks() == []


def test_the_predictions_and_the_heat_map_export(qtbot, masked_words, tmp_path):
    actions = {action.label: action for action in masked_words.export_actions()}
    assert sorted(actions) == [
        "Attention heat map as PNG…",
        "Attention heat map as SVG…",
        "Predictions as CSV…",
        "Predictions as JSON…",
    ]
    text = "the [MASK] sat on the [MASK] ."
    outcome = _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    assert actions["Predictions as CSV…"].available()
    assert not actions["Attention heat map as PNG…"].available()
    for label in ("Predictions as CSV…", "Predictions as JSON…"):
        actions[label].write(actions[label].path_for(tmp_path / "predictions"))
    with open(tmp_path / "predictions.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    document = json.loads((tmp_path / "predictions.json").read_text(encoding="utf-8"))
    assert document["text"] == text and document["model"] == outcome.source
    view = masked_words.predictions_view
    assert len(rows) == sum(view.model(index).rowCount() for index in range(2)) == 10
    for row in rows:
        mask, rank = int(row["mask"]) - 1, int(row["rank"]) - 1
        model = view.model(mask)
        assert row["token"] == model.index(rank, 0).data()
        assert model.index(rank, 1).data() == probability_text(float(row["probability"]))
        assert text[int(row["start"]) : int(row["end"])] == "[MASK]"
        exported = document["masks"][mask]["predictions"][rank]
        assert exported["token"] == row["token"] and exported["text"] == row["text"]
        assert exported["probability"] == pytest.approx(float(row["probability"]))

    panel = masked_words.attention_panel
    _predict(qtbot, panel.runner, lambda: masked_words.output_tabs.setCurrentWidget(panel))
    png, svg = actions["Attention heat map as PNG…"], actions["Attention heat map as SVG…"]
    assert png.available()
    png.write(png.path_for(tmp_path / "attention"))
    svg.write(svg.path_for(tmp_path / "attention"))
    # Below the map, a line says which model, layer and head it shows.
    assert panel.caption() == "masked_lm · layer 1 · average of heads"
    image = QImage(str(tmp_path / "attention.png"))
    assert image.width() == panel.heat_map.width()
    assert image.height() > panel.heat_map.height() + panel.heat_map.fontMetrics().height()
    caption_strip = [
        image.pixelColor(x, y).lightness()
        for x in range(image.width())
        for y in range(panel.heat_map.height(), image.height())
    ]
    assert min(caption_strip) < 128  # the caption's ink
    svg_text = (tmp_path / "attention.svg").read_text(encoding="utf-8")
    assert "<svg" in svg_text and panel.caption() in svg_text


def test_the_tab_follows_the_current_model(qtbot, masked_words, model_store, presets):
    text = "the [MASK] ran ."
    _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
    # The title names the model as the window's header does (a run's model after its
    # run: test_model_names.py), the full path on hover.
    title = masked_words.predictions_view.title_label
    assert title.text() == "masked_lm" and title.toolTip() == presets.masked_lm

    _predict(qtbot, masked_words.controller.runner, lambda: model_store.set_source(presets.backbone_only))
    assert title.text() == "backbone_only"
    assert title.toolTip() == presets.backbone_only
    expected = _model(model_store, presets.backbone_only).fill_mask(text, top_k=5)
    _assert_shows(masked_words.predictions_view, expected)
    assert "no trained masked-LM head" in masked_words.predictions_view.warning


def test_a_missing_model_is_reported_inline(qtbot, masked_words, model_store, tmp_path):
    errors = []
    masked_words.controller.runner.error.connect(errors.append)
    model_store.set_source(str(tmp_path / "nowhere"))
    qtbot.waitUntil(lambda: bool(errors), timeout=10000)
    assert masked_words.predictions_view.error_banner.message.startswith("No model at ")


# --- Responsiveness ----------------------------------------------------------------------------


@pytest.mark.timing
def test_the_ui_thread_never_stalls_while_predicting(qtbot, monkeypatch, masked_words, presets):
    on_ui_thread = record_threads(monkeypatch, FillMaskOutcome, "compute")
    pane = masked_words.comparison_pane
    pane.set_comparison_source(presets.backbone_only)

    def predict_with_both(text):
        compared = []
        pane.runner.result.connect(compared.append)
        # One edit per event-loop turn, as a user types (keyClicks would send a whole
        # string in one turn and measure the test's own typing).
        _predict(qtbot, masked_words.controller.runner, lambda: _set_text(masked_words, text))
        qtbot.waitUntil(lambda: bool(compared), timeout=PREDICTION_TIMEOUT_MS)
        assert masked_words.predictions_view.outcome.text == pane.view.outcome.text == text

    # Loading and compiling happen once per model and input shape; measured is what
    # follows, the predictions as the user goes on typing.
    predict_with_both("the [MASK] sat .")
    heartbeat = Heartbeat()
    heartbeat.start()
    for text in ("the [MASK] ran .", "a big dog ran to [MASK] near the river .", "[MASK] ."):
        predict_with_both(text)
    heartbeat.stop()
    # Both models loaded and predicted (every text, new input shapes included) off the
    # UI thread; the window never froze while they did.
    assert len(on_ui_thread) >= 8 and not any(on_ui_thread)
    assert heartbeat.max_gap_ms < FROZEN_WINDOW_MS


# --- The item model ----------------------------------------------------------------------------


def test_mask_prediction_model(qtmodeltester):
    model = MaskPredictionModel()
    qtmodeltester.check(model)
    candidates = (
        MaskPrediction("amster", 40, 0.5, "amster sat"),
        MaskPrediction("##dam", 41, 0.25, "dam sat"),
    )
    model.set_mask(MaskFill(position=1, start=0, end=6, candidates=candidates))
    qtmodeltester.check(model)
    assert model.rowCount() == 2 and model.columnCount() == 2
    assert model.index(1, 0).data() == "##dam"
    assert model.index(0, 1).data() == "50.0 %"
    assert model.index(1, 1).data(PROBABILITY_ROLE) == 0.25
    assert model.index(1, 0).data(PREDICTION_ROLE) is candidates[1]
    # A continuation piece goes into the text without its "##".
    assert model.replacement(1) == "dam" and model.replacement(0) == "amster"
    # Scored multi-piece words far under 0.1 % still read differently (scientific).
    from kbert.inference.results import WordScore

    scores = (
        WordScore("amsterdam", ("amster", "##dam"), 1.48e-9, "amsterdam sat", ""),
        WordScore("rotterdam", ("rotter", "##dam"), 1.41e-20, "rotterdam sat", ""),
    )
    model.set_mask(MaskFill(position=1, start=0, end=6, candidates=scores))
    assert [model.index(row, 1).data() for row in range(2)] == ["1.5e-09", "1.4e-20"]
    assert "'amsterdam': 1.5e-09, the product of its 2 pieces'" in model.index(0, 0).data(
        Qt.ItemDataRole.ToolTipRole
    )
    model.set_mask(None)
    assert model.rowCount() == 0
