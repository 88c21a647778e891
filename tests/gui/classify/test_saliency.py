"""The "Why?" box of the "Classify & tag" tab: token saliency exactly as
`kbert.inference.saliency` gives it, its caption, its shading and its exports.

One-layer models of hidden size 32 with wide initial weights (so that single pieces move
the probabilities well above float32 noise), on every backend.
"""

import csv
import json

import numpy as np
import pytest
from gui_helpers import classify_in_tab
from gui_helpers import classify_tab
from fine_tuning_data import make_tiny_preset
from fine_tuning_helpers import SMALL_MODEL

from kbert_gui.classify.saliency_format import STRONGEST_TINT
from kbert_gui.classify.saliency_format import score_text
from kbert_gui.classify.saliency_format import token_colors
from kbert_gui.widgets import style

TAGS = ["O", "B-PER", "I-PER", "B-LOC"]
# An emoji (two UTF-16 units in Qt) before the pieces, and a split word ("amster ##dam").
TEXT = "😀 alice smith sat near the king in amsterdam ."
TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from kbert.models import BertClassifier
    from kbert.models import BertTokenClassifier

    folder = tmp_path_factory.mktemp("gui_saliency")
    backbone = make_tiny_preset(folder / "preset", **SMALL_MODEL, initializer_range=0.3)
    classifier = BertClassifier.from_preset(backbone, label_names=["neg", "pos", "mixed"])
    classifier.save_to_preset(folder / "sentiment")
    tagger = BertTokenClassifier.from_preset(backbone, label_names=TAGS)
    # Every word a person: each word is an entity, so the entity list is known.
    bias = tagger.get_layer("token_classifier_head").weights[1]
    bias.assign(np.array([0.0, 8.0, 0.0, 0.0], dtype="float32"))
    tagger.save_to_preset(folder / "names")
    return {"classifier": folder / "sentiment", "tagger": folder / "names"}


def _explain(tab, qtbot, method):
    panel = tab.saliency_panel
    panel.method_combo.setCurrentIndex(panel.method_combo.findData(method))
    saliency = tab.controller.saliency
    saliency.outcome = None
    panel.why_button.click()
    qtbot.waitUntil(
        lambda: saliency.saliency is not None or bool(tab.error_banner.message),
        timeout=TIMEOUT_MS,
    )
    assert tab.error_banner.message == ""
    return saliency.saliency


def _shown(view):
    """`(token, tooltip, background)` of each shaded piece, read back from the view."""
    shown = []
    for index, selection in enumerate(view.extraSelections()):
        start, end = view.qt_span(index)
        assert (selection.cursor.selectionStart(), selection.cursor.selectionEnd()) == (start, end)
        shown.append((view.tooltip_at(start), selection.format.background().color().name()))
    return shown


def test_a_classifier_label_explained_by_occlusion(qtbot, tmp_path, models):
    from kbert.inference import saliency
    from kbert.models import BertClassifier

    with classify_tab(qtbot, tmp_path, models["classifier"]) as tab:
        classify_in_tab(tab, qtbot, TEXT)
        panel = tab.saliency_panel
        assert panel.isVisibleTo(tab) and panel.why_button.isEnabled()
        predicted = tab.outcome.classification.label
        assert panel.target_combo.currentData() == predicted
        panel.target_combo.setCurrentIndex(panel.target_combo.findData("mixed"))
        shown = _explain(tab, qtbot, "occlusion")

        reference = BertClassifier.from_preset(models["classifier"])
        expected = saliency(reference, None, TEXT, target="mixed", method="occlusion")
        assert shown.tokens == expected.tokens and shown.offsets == expected.offsets
        np.testing.assert_allclose(shown.scores, expected.scores, atol=1e-6)
        assert np.abs(expected.scores).max() > 1e-3
        view = panel.text_view
        assert view.toPlainText() == TEXT
        tooltips = [f"{token}: {score_text(score)}" for token, score in
                    zip(expected.tokens, expected.scores)]
        assert [row[0] for row in _shown(view)] == tooltips
        assert [row[1] for row in _shown(view)] == token_colors(shown.scores)
        caption = panel.caption_label.text()
        assert caption.startswith("Occlusion for “mixed”")

        # The "Export…" button (the name chosen decides the format) and File ▸ Export.
        csv_path, json_path = tmp_path / "why.csv", tmp_path / "why.json"
        chosen = iter([str(csv_path), str(json_path)])
        tab.context.file_dialogs.save_file = lambda *args: next(chosen)
        panel.export_button.click()
        panel.export_button.click()
        menu_csv, menu_json = tab.export_actions()[2:]
        assert menu_csv.available() and menu_json.available()
        menu_csv.write(tmp_path / "menu.csv")
        assert (tmp_path / "menu.csv").read_bytes() == csv_path.read_bytes()
        with open(csv_path, newline="", encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
        assert [row["token"] for row in rows] == list(shown.tokens)
        assert [float(row["score"]) for row in rows] == pytest.approx(shown.scores.tolist())
        assert [(int(row["start"]), int(row["end"])) for row in rows] == list(shown.offsets)
        document = json.loads(json_path.read_text(encoding="utf-8"))
        assert document["method"] == "occlusion" and document["method_name"] == "Occlusion"
        assert document["target"] == "mixed" and document["text"] == TEXT
        assert [row["score"] for row in document["tokens"]] == pytest.approx(shown.scores.tolist())

        tab.text_edit.textCursor().insertText("the ")
        assert tab.controller.saliency.saliency is None and view.toPlainText() == ""
        assert not panel.export_button.isEnabled()


def test_a_tagger_entity_explained_by_integrated_gradients(qtbot, tmp_path, models):
    from kbert.inference import saliency
    from kbert.models import BertTokenClassifier

    with classify_tab(qtbot, tmp_path, models["tagger"]) as tab:
        classify_in_tab(tab, qtbot, TEXT)
        panel = tab.saliency_panel
        entities = tab.outcome.entities
        assert panel.target_combo.count() == len(entities) > 2
        # Clicking an entity in the table makes it the target.
        index = tab.entities_model.index(2, 0)
        tab.entities_view.clicked.emit(index)
        assert panel.target_combo.currentData() == entities[2]
        shown = _explain(tab, qtbot, "integrated_gradients")

        reference = BertTokenClassifier.from_preset(models["tagger"])
        expected = saliency(
            reference, None, TEXT, target=entities[2], method="integrated_gradients"
        )
        np.testing.assert_allclose(shown.scores, expected.scores, atol=1e-6)
        assert shown.target_span == (entities[2].start, entities[2].end)
        caption = panel.caption_label.text()
        expected_start = f"Integrated gradients for the PER entity “{entities[2].text}”"
        assert caption.startswith(expected_start)
        assert f"({shown.steps} steps)" in caption


def _distance(color, other):
    return sum(abs(a - b) for a, b in zip(style.rgb(color), style.rgb(other)))


def test_token_colors_tell_support_from_opposition():
    colors = token_colors([0.5, -0.25, 0.0, -0.5])
    assert colors[2] == style.PAPER
    supports, opposes = style.SUPPORTS_TARGET, style.OPPOSES_TARGET
    # The strongest pieces go `STRONGEST_TINT` of the way from white to their side's colour.
    assert _distance(colors[0], style.PAPER) == pytest.approx(
        STRONGEST_TINT * _distance(style.PAPER, supports), abs=3
    )
    assert _distance(colors[0], supports) < _distance(colors[0], opposes)
    assert _distance(colors[3], opposes) < _distance(colors[3], supports)
    # Half the score, half the tint.
    assert _distance(colors[1], style.PAPER) == pytest.approx(
        _distance(colors[3], style.PAPER) / 2, abs=3
    )
    assert token_colors([0.0, 0.0]) == [style.PAPER, style.PAPER]
