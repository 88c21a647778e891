"""The masked-word explorer tab: predictions as you type, masks, targets, attention, comparison.

The tabs of one module share a `ModelStore` (fresh `AppContext` and tab per test), so each
tiny model is loaded and compiled once per backend.
"""

import threading
import types

import keras
import numpy as np
import pytest
import shiboken6
from PySide6.QtCore import QSettings
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from kbert_gui.app_context import AppContext
from kbert_gui.explorer_tab import ExplorerTab
from kbert_gui.fill_mask_outcome import FillMaskOutcome
from kbert_gui.mask_prediction_model import PREDICTION_ROLE
from kbert_gui.mask_prediction_model import PROBABILITY_ROLE
from kbert_gui.mask_prediction_model import MaskPredictionModel
from kbert_gui.masked_text_edit import MaskedTextEdit
from kbert_gui.masked_text_edit import word_span
from kbert_gui.model_store import ModelStore
from gui_helpers import Heartbeat
from gui_helpers import make_context
from gui_helpers import stop_context
from kbert.inference import MaskFill
from kbert.inference import MaskPrediction
from kbert.inference import attention_map
from test_finetune_acceptance import TINY_MODEL
from test_finetune_acceptance import VOCABULARY

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
    base = tmp_path_factory.mktemp("explorer_presets")
    tokenizer = BertTokenizer(list(VOCABULARY), lowercase=True, max_length=64)
    backbone = BertBackbone(**dict(TINY_MODEL, vocabulary_size=len(VOCABULARY)))
    backbone.save_to_preset(base / "backbone_only", tokenizer=tokenizer)
    BertMaskedLM(backbone).save_to_preset(base / "masked_lm", tokenizer=tokenizer)
    return types.SimpleNamespace(
        masked_lm=str(base / "masked_lm"), backbone_only=str(base / "backbone_only")
    )


@pytest.fixture(scope="module")
def model_store(qapp, tmp_path_factory, presets):
    folder = tmp_path_factory.mktemp("explorer_store")
    settings = QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)
    return ModelStore(presets.masked_lm, settings=settings, cache_dir=folder / "converted")


def _open(qtbot, context):
    tab = ExplorerTab(context)
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
def explorer(qtbot, model_store, presets):
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
    return [model.prediction(row).token for row in range(model.rowCount())]


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
        assert view.mask_title(index) == f"mask {index + 1} at chars {mask.start}–{mask.end}"
        assert _shown_tokens(view, index) == [c.token for c in mask.candidates]
        np.testing.assert_allclose(
            _shown_probabilities(view, index), [c.probability for c in mask.candidates], atol=1e-6
        )


def _check_top_k_and_click_to_fill(qtbot, tab, text):
    outcome = _predict(qtbot, tab.runner, lambda: _type(qtbot, tab, text))
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


def test_explorer_shows_the_demo_models_top_k_and_clicking_fills_it_in(qtbot, tmp_path):
    # Needs the bundled "demo" preset (kbert.presets.BUILTIN_PRESETS["demo"]).
    context = make_context(tmp_path, "demo")
    tab = _open(qtbot, context)
    try:
        _check_top_k_and_click_to_fill(qtbot, tab, "The capital of France is [MASK].")
    finally:
        _close(tab, context)


def test_explorer_shows_a_presets_top_k_and_clicking_fills_it_in(qtbot, explorer):
    assert explorer.windowTitle() == "Masked words"
    assert explorer.top_k_spin.value() == 5
    _check_top_k_and_click_to_fill(qtbot, explorer, "the cat sat on the [MASK] .")
    assert not explorer.predictions_view.warning


# --- Type as you go ----------------------------------------------------------------------------


def test_typing_runs_one_prediction_after_the_pause(qtbot, explorer, monkeypatch):
    texts = []
    original = FillMaskOutcome.compute.__func__

    def counting(cls, models, source, text, top_k, targets=None):
        texts.append(text)
        return original(cls, models, source, text, top_k, targets)

    monkeypatch.setattr(FillMaskOutcome, "compute", classmethod(counting))
    outcome = _predict(qtbot, explorer.runner, lambda: _type(qtbot, explorer, "a [MASK] sat ."))
    qtbot.wait(400)  # longer than the debounce pause: nothing else starts
    assert texts == ["a [MASK] sat ."]
    assert outcome.result.text == "a [MASK] sat ."
    assert explorer.predictions_view.mask_title(0) == "mask 1 at chars 2–8"


def test_a_superseded_request_is_never_shown(qtbot, explorer, monkeypatch):
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
    explorer.runner.result.connect(shown.append)
    _set_text(explorer, stale)
    qtbot.waitUntil(entered.is_set, timeout=10000)  # the stale request is running

    def supersede_then_release():
        _set_text(explorer, latest)
        release.set()

    _predict(qtbot, explorer.runner, supersede_then_release)
    assert [outcome.result.text for outcome in shown] == [latest]
    assert explorer.predictions_view.result.text == latest
    assert [explorer.predictions_view.mask_title(i) for i in range(2)] == [
        "mask 1 at chars 0–6",
        "mask 2 at chars 22–28",
    ]


def test_text_without_a_mask_shows_the_hint(qtbot, explorer, monkeypatch):
    calls = []
    monkeypatch.setattr(FillMaskOutcome, "compute", classmethod(lambda *args: calls.append(args)))
    _set_text(explorer, "the cat sat .")
    qtbot.wait(400)
    assert calls == []
    assert explorer.predictions_view.mask_count() == 0
    assert explorer.predictions_view.hint.startswith("Type [MASK] or double-click a word")


# --- Masks -------------------------------------------------------------------------------------


def test_insert_mask_button_and_shortcut(qtbot, explorer):
    editor = explorer.editor
    _set_text(explorer, "the cat sat")
    editor.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.mouseClick(explorer.insert_mask_button, Qt.MouseButton.LeftButton)
    assert editor.toPlainText() == "the cat sat [MASK]"

    cursor = editor.textCursor()
    cursor.setPosition(3)
    editor.setTextCursor(cursor)
    explorer.activateWindow()
    qtbot.waitActive(explorer)
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert editor.toPlainText() == "the [MASK] cat sat [MASK]"

    # Over a selection, the mask replaces the selected word.
    cursor.setPosition(15)
    cursor.setPosition(18, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)
    assert cursor.selectedText() == "sat"
    qtbot.mouseClick(explorer.insert_mask_button, Qt.MouseButton.LeftButton)
    assert editor.toPlainText() == "the [MASK] cat [MASK] [MASK]"


def test_double_clicking_a_word_masks_it(qtbot, explorer):
    editor = explorer.editor
    _set_text(explorer, "The cat sat on the mat.")

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


def test_several_masks_get_one_list_each(qtbot, explorer, model_store):
    text = "the [MASK] sat on the [MASK] ."
    _predict(qtbot, explorer.runner, lambda: _set_text(explorer, text))
    expected = _model(model_store).fill_mask(text, top_k=5)
    _assert_shows(explorer.predictions_view, expected)
    assert explorer.predictions_view.mask_title(1) == "mask 2 at chars 22–28"

    # A prediction for the second mask fills that mask only.
    row = _a_word_row(explorer.predictions_view.model(1))
    second = expected.masks[1].candidates[row]
    outcome = _predict(
        qtbot, explorer.runner, lambda: _click_row(qtbot, explorer.predictions_view.table(1), row)
    )
    assert explorer.text == second.text
    assert explorer.predictions_view.mask_count() == 1
    assert explorer.predictions_view.mask_title(0) == "mask 1 at chars 4–10"
    assert outcome.result.text == second.text


def test_top_k_and_scoring_named_words(qtbot, explorer, model_store):
    text = "the [MASK] sat ."
    _predict(qtbot, explorer.runner, lambda: _set_text(explorer, text))
    _predict(qtbot, explorer.runner, lambda: explorer.top_k_spin.setValue(2))
    assert explorer.predictions_view.model(0).rowCount() == 2

    _predict(qtbot, explorer.runner, lambda: explorer.targets_edit.setText("cat, dog , ,mat"))
    assert explorer.targets() == ["cat", "dog", "mat"]
    expected = _model(model_store).fill_mask(text, top_k=2, targets=["cat", "dog", "mat"])
    _assert_shows(explorer.predictions_view, expected)
    assert set(_shown_tokens(explorer.predictions_view, 0)) <= {"cat", "dog", "mat"}

    # "amsterdam" is two word pieces: kbert's own message, inline, and no stale lists.
    errors = []
    explorer.runner.error.connect(errors.append)
    explorer.targets_edit.setText("cat, amsterdam")
    qtbot.waitUntil(lambda: bool(errors), timeout=PREDICTION_TIMEOUT_MS)
    message = explorer.predictions_view.error_banner.message
    assert message == errors[0]
    assert "'amsterdam' tokenizes as ['amster', '##dam']" in message
    assert explorer.predictions_view.mask_count() == 0

    explorer.targets_edit.clear()
    _predict(qtbot, explorer.runner, lambda: None)
    assert explorer.predictions_view.error_banner.message == ""
    assert explorer.predictions_view.model(0).rowCount() == 2


# --- Attention ---------------------------------------------------------------------------------


def test_attention_heat_map_shows_the_chosen_layer_and_head(qtbot, explorer, model_store):
    panel = explorer.attention_panel
    text = "the cat sat on the [MASK] ."
    _predict(qtbot, explorer.runner, lambda: _set_text(explorer, text))
    # Hidden, the panel computes nothing.
    assert panel.runner.generation == 0 and panel.attention is None

    _predict(qtbot, panel.runner, lambda: explorer.output_tabs.setCurrentWidget(panel))
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
    _predict(qtbot, panel.runner, lambda: _set_text(explorer, "a dog ran ."))
    assert panel.heat_map.tokens == ("[CLS]", "a", "dog", "ran", ".", "[SEP]")
    assert panel.selection() == (None, 2)


# --- Two models --------------------------------------------------------------------------------


def test_comparison_shows_the_second_models_predictions(qtbot, explorer, model_store, presets):
    pane = explorer.comparison_pane
    text = "the dog ran to [MASK] ."
    _predict(qtbot, explorer.runner, lambda: _set_text(explorer, text))
    assert pane.view.hint.startswith("Compare with a second model")

    def compare():
        pane.source_edit.setText(presets.backbone_only)
        qtbot.mouseClick(pane.compare_button, Qt.MouseButton.LeftButton)

    outcome = _predict(qtbot, pane.runner, compare)
    assert pane.comparison_source == presets.backbone_only
    assert outcome.source == presets.backbone_only
    _assert_shows(pane.view, _model(model_store, presets.backbone_only).fill_mask(text, top_k=5))
    _assert_shows(explorer.predictions_view, _model(model_store).fill_mask(text, top_k=5))
    # Its masked-LM head was initialised at random: said so, next to its predictions only.
    assert "predictions are random" in pane.view.warning
    assert explorer.predictions_view.warning == ""

    # A click in the second model's list fills the text too; both re-predict.
    row = _a_word_row(pane.view.model(0))
    candidate = pane.view.model(0).prediction(row)
    _click_row(qtbot, pane.view.table(0), row)
    assert explorer.text == candidate.text
    assert pane.view.hint.startswith("Type [MASK]")
    assert explorer.predictions_view.hint.startswith("Type [MASK]")

    pane.stop_button.click()
    assert pane.comparison_source is None and pane.view.mask_count() == 0


def test_the_tab_follows_the_current_model(qtbot, explorer, model_store, presets):
    text = "the [MASK] ran ."
    _predict(qtbot, explorer.runner, lambda: _set_text(explorer, text))
    assert explorer.predictions_view.title_label.text() == "masked_lm"

    _predict(qtbot, explorer.runner, lambda: model_store.set_source(presets.backbone_only))
    assert explorer.predictions_view.title_label.text() == "backbone_only"
    expected = _model(model_store, presets.backbone_only).fill_mask(text, top_k=5)
    _assert_shows(explorer.predictions_view, expected)
    assert "no trained masked-LM head" in explorer.predictions_view.warning


def test_a_missing_model_is_reported_inline(qtbot, explorer, model_store, tmp_path):
    errors = []
    explorer.runner.error.connect(errors.append)
    model_store.set_source(str(tmp_path / "nowhere"))
    qtbot.waitUntil(lambda: bool(errors), timeout=10000)
    assert explorer.predictions_view.error_banner.message.startswith("No model at ")


# --- Responsiveness ----------------------------------------------------------------------------


def test_the_ui_thread_never_stalls_while_predicting(qtbot, explorer, presets):
    pane = explorer.comparison_pane
    pane.set_comparison_source(presets.backbone_only)

    def predict_with_both(text):
        compared = []
        pane.runner.result.connect(compared.append)
        # One edit per event-loop turn, as a user types (keyClicks would send a whole
        # string in one turn and measure the test's own typing).
        _predict(qtbot, explorer.runner, lambda: _set_text(explorer, text))
        qtbot.waitUntil(lambda: bool(compared), timeout=PREDICTION_TIMEOUT_MS)
        assert explorer.predictions_view.result.text == pane.view.result.text == text

    # Loading and compiling happen once per model and input shape; measured is what
    # follows, the predictions as the user goes on typing.
    predict_with_both("the [MASK] sat .")
    heartbeat = Heartbeat()
    heartbeat.start()
    for text in ("the [MASK] ran .", "a big dog ran to [MASK] near the river .", "[MASK] ."):
        predict_with_both(text)
    heartbeat.stop()
    assert heartbeat.max_gap_ms < 200


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
    model.set_mask(None)
    assert model.rowCount() == 0
