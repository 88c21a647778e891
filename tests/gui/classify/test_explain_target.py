"""The "Why?" box offers a new text's most probable label first: a label picked for the
previous text does not stay picked."""

from gui_helpers import make_context
from gui_helpers import stop_context
from test_saliency import models  # noqa: F401 (a fixture: a three-label classifier)

from kbert_gui.classify.classify_tab import ClassifyTab

TIMEOUT_MS = 60_000
FIRST, SECOND = "alice sat near the king .", "the dog ran under the blue tree ."


def _predict(tab, qtbot, text):
    tab.set_text(text)
    qtbot.waitUntil(
        lambda: tab.outcome is not None and tab.outcome.text == text, timeout=TIMEOUT_MS
    )
    return tab.outcome.classification.label


def test_a_new_text_offers_its_own_top_label(qtbot, tmp_path, models):
    context = make_context(tmp_path, str(models["classifier"]))
    tab = ClassifyTab(context)
    qtbot.addWidget(tab)
    combo = tab.saliency_panel.target_combo
    try:
        second_top = _predict(tab, qtbot, SECOND)
        _predict(tab, qtbot, FIRST)
        picked = next(label for label in ("neg", "pos", "mixed") if label != second_top)
        combo.setCurrentIndex(combo.findData(picked))
        assert combo.currentData() == picked
        _predict(tab, qtbot, SECOND)
        assert combo.currentData() == second_top and combo.currentIndex() == 0
    finally:
        stop_context(context)
