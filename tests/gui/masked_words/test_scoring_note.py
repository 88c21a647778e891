""""Score these words" says that it replaces the top k, for every text, until cleared."""

from gui_helpers import make_context
from gui_helpers import stop_context

from kbert_gui.masked_words.masked_words_format import SCORING_NOTE
from kbert_gui.masked_words.masked_words_tab import MaskedWordsTab


def test_named_words_say_they_replace_the_top_k_until_cleared(qtbot, tmp_path):
    context = make_context(tmp_path)
    tab = MaskedWordsTab(context)
    qtbot.addWidget(tab)
    try:
        assert tab.scoring_note.isHidden() and tab.top_k_spin.isEnabled()
        tab.targets_edit.setText("paris, london")
        assert not tab.scoring_note.isHidden()
        assert tab.scoring_note.text() == SCORING_NOTE
        assert not tab.top_k_spin.isEnabled()
        # Commas alone name no word: the top k is back.
        tab.targets_edit.setText(" , ")
        assert tab.scoring_note.isHidden() and tab.top_k_spin.isEnabled()
    finally:
        stop_context(context)
