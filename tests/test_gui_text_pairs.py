"""Text pairs in the "Classify & tag" tab: a second text given to a classifier trained on
single texts (or none to one trained on pairs) is noted below it, and "Why?" explains a
pair, scoring the pieces of both texts as `kbert.inference.saliency` does."""

import csv

import numpy as np
import pytest

pytest.importorskip("PySide6")

from fine_tuning_data import make_tiny_preset  # noqa: E402
from fine_tuning_helpers import SMALL_MODEL  # noqa: E402
from gui_helpers import classify_in_tab  # noqa: E402
from gui_helpers import classify_tab  # noqa: E402

LABELS = ["neg", "pos", "mixed"]
TEXT, PAIR = "alice sat near the king .", "the dog ran under the blue tree ."
TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Classifiers saved as fine-tuning saves them, for single texts and for pairs, and
    one whose task is not recorded."""
    from kbert.models import BertClassifier

    folder = tmp_path_factory.mktemp("gui_pairs")
    backbone = make_tiny_preset(folder / "preset", **SMALL_MODEL, initializer_range=0.3)
    classifier = BertClassifier.from_preset(backbone, label_names=LABELS)
    for name, task in (("single", "classification"), ("pairs", "pair-classification")):
        record = {"task": task, "epoch": 1, "accuracy": 0.5}
        classifier.save_to_preset(folder / name, metadata={"fine_tuning": record})
    classifier.save_to_preset(folder / "unknown")
    return {name: folder / name for name in ("single", "pairs", "unknown")}


def _note(tab):
    note = tab.pair_note
    return "" if note.isHidden() else note.text()


def _note_once_classified(tab, qtbot, text, pair=""):
    """The note below the second text once the tab has classified `text` (and `pair`)."""
    classify_in_tab(tab, qtbot, text, pair)
    return _note(tab)


def test_a_second_text_for_a_single_text_classifier_is_noted(qtbot, tmp_path, models):
    with classify_tab(qtbot, tmp_path, models["single"]) as tab:
        assert _note_once_classified(tab, qtbot, TEXT) == ""
        assert "trained on single texts" in tab.head_label.text()
        note = _note_once_classified(tab, qtbot, TEXT, PAIR)
        assert "trained on single texts (Text classification), never on pairs" in note
        tab.pair_edit.clear()
        assert _note(tab) == ""


def test_a_pair_classifier_asks_for_its_second_text(qtbot, tmp_path, models):
    with classify_tab(qtbot, tmp_path, models["pairs"]) as tab:
        note = _note_once_classified(tab, qtbot, TEXT)
        assert "trained on text pairs (Text-pair classification)" in note
        assert _note_once_classified(tab, qtbot, TEXT, PAIR) == ""
        # A classifier whose task is not recorded takes either without a note.
        tab.context.models.set_source(str(models["unknown"]))
        assert _note_once_classified(tab, qtbot, TEXT, PAIR) == ""


def test_why_explains_a_text_pair(qtbot, tmp_path, models):
    from kbert.inference import saliency
    from kbert.models import BertClassifier

    with classify_tab(qtbot, tmp_path, models["pairs"]) as tab:
        classify_in_tab(tab, qtbot, TEXT, PAIR)
        panel = tab.saliency_panel
        assert panel.isVisibleTo(tab) and panel.why_button.isEnabled()
        panel.target_combo.setCurrentIndex(panel.target_combo.findData("mixed"))
        panel.why_button.click()
        controller = tab.controller.saliency
        qtbot.waitUntil(
            lambda: controller.saliency is not None or bool(tab.error_banner.message),
            timeout=TIMEOUT_MS,
        )
        assert tab.error_banner.message == ""
        shown = controller.saliency
        reference = BertClassifier.from_preset(models["pairs"])
        expected = saliency(reference, None, TEXT, target="mixed", pair=PAIR)
        assert shown.tokens == expected.tokens and shown.sequence_ids == expected.sequence_ids
        assert set(shown.sequence_ids) == {0, 1}
        np.testing.assert_allclose(shown.scores, expected.scores, atol=1e-6)
        # The view shows both texts, each piece shaded where it is.
        view = panel.text_view
        assert view.toPlainText() == f"{TEXT}\n{PAIR}"
        for index, token in enumerate(shown.tokens):
            start, end = view.qt_span(index)
            assert view.toPlainText()[start:end] == token.removeprefix("##")
        controller.write_csv(tmp_path / "why.csv")
        with open(tmp_path / "why.csv", newline="", encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
        assert [int(row["sequence"]) for row in rows] == list(shown.sequence_ids)
        # Another second text clears the scores of the old pair.
        tab.pair_edit.setPlainText("a cat")
        qtbot.waitUntil(lambda: controller.saliency is None, timeout=TIMEOUT_MS)


def test_the_bundled_spam_filter_is_known_to_read_single_texts():
    from kbert.presets import resolve_preset
    from kbert_gui import BUNDLED_CLASSIFIER
    from kbert_gui.classify.classify_format import pair_note
    from kbert_gui.classify.classify_head import ClassifyHead
    from kbert_gui.services.model_description import ModelDescription

    folder = resolve_preset(BUNDLED_CLASSIFIER)
    head = ClassifyHead.of(ModelDescription.read(BUNDLED_CLASSIFIER, folder))
    assert head.takes_pair and head.trained_on_pairs is False
    assert "trained on single texts" in pair_note(head, "a second text")
    assert pair_note(head, None) == ""
