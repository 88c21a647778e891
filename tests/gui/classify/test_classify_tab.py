"""The "Classify & tag" tab: a fine-tuned classifier or tagger used on new text, exactly
as `classify` and `tag` see it; the automatic switch to it; its exports.

Runs on every backend with one-layer models of hidden size 32, fine-tuned for a few
steps (through the fine-tuning tab in the end-to-end test).
"""

import csv
import json

import numpy as np
import pytest
from gui_helpers import make_context
from gui_helpers import stop_context
from PySide6.QtCore import Qt
from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from fine_tuning_data import token_classification_examples
from fine_tuning_helpers import SMALL_MODEL
from fine_tuning_helpers import open_window
from fine_tuning_helpers import run_and_open
from fine_tuning_helpers import set_up_run
from fine_tuning_helpers import write_csv

from kbert_gui.classify.classify_tab import ClassifyTab
from kbert_gui.classify.entity_span_model import EntitySpanModel
from kbert_gui.classify.label_probability_model import PROBABILITY_ROLE
from kbert_gui.classify.label_probability_model import LabelProbabilityModel
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets.probability_text import probability_text

TAGS = ["O", "B-PER", "I-PER", "B-LOC"]
# An emoji (two UTF-16 units in Qt) before the entities, and one inside the text.
TAGGED_TEXT = "😀 alice smith sat near the 🐈 in paris ."
TIMEOUT_MS = 60_000


def _write_conll(path, examples):
    lines = []
    for example in examples:
        lines.extend(f"{token} {tag}" for token, tag in zip(example.tokens, example.tags))
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A tiny backbone preset, a classifier and a tagger saved from it."""
    from kbert.models import BertClassifier
    from kbert.models import BertTokenClassifier

    folder = tmp_path_factory.mktemp("gui_classify")
    backbone = make_tiny_preset(folder / "preset", **SMALL_MODEL)
    classifier = BertClassifier.from_preset(backbone, label_names=["neg", "pos", "mixed"])
    classifier.save_to_preset(folder / "runs" / "sentiment" / "model")
    tagger = BertTokenClassifier.from_preset(backbone, label_names=TAGS)
    # An untrained head tags at random; this bias makes every word a person, so each
    # word is an entity and every offset is checked.
    bias = tagger.get_layer("token_classifier_head").weights[1]
    bias.assign(np.array([0.0, 8.0, 0.0, 0.0], dtype="float32"))
    tagger.save_to_preset(folder / "runs" / "names" / "model")
    return {
        "backbone": backbone,
        "classifier": folder / "runs" / "sentiment" / "model",
        "tagger": folder / "runs" / "names" / "model",
    }


@pytest.fixture
def tab(qtbot, tmp_path, models):
    context = make_context(tmp_path, str(models["classifier"]))
    widget = ClassifyTab(context)
    qtbot.addWidget(widget)
    yield widget
    stop_context(context)


def _predict(tab, qtbot, text, pair=""):
    tab.set_text(text, pair)
    qtbot.waitUntil(
        lambda: bool(
            (tab.outcome is not None and tab.outcome.text == text) or tab.error_banner.message
        ),
        timeout=TIMEOUT_MS,
    )
    assert tab.error_banner.message == ""
    return tab.outcome


def test_item_models_pass_the_model_tester(qtmodeltester):
    from kbert.inference import Classification
    from kbert.inference import EntitySpan

    labels = LabelProbabilityModel()
    labels.set_classification(
        Classification("pos", 0.7, {"neg": 0.1, "pos": 0.7, "mixed": 0.2})
    )
    qtmodeltester.check(labels)
    assert labels.rows() == [("pos", 0.7), ("mixed", 0.2), ("neg", 0.1)]
    assert labels.data(labels.index(0, 1), PROBABILITY_ROLE) == 0.7
    assert labels.data(labels.index(0, 0), Qt.ItemDataRole.FontRole).bold()
    entities = EntitySpanModel()
    entities.set_entities([EntitySpan("PER", 2, 7, "alice", 0.9)], {"PER": "#ffd54f"})
    qtmodeltester.check(entities)
    assert entities.data(entities.index(0, 3)) == "2–7"
    assert entities.data(entities.index(0, 0), Qt.ItemDataRole.DecorationRole).name() == "#ffd54f"


def test_a_classifier_shows_what_classify_returns(tab, qtbot, models):
    from kbert.models import BertClassifier

    reference = BertClassifier.from_preset(models["classifier"])
    for text, pair in (("a lovely cat sat on the mat", ""), ("the dog ran", "a good house")):
        outcome = _predict(tab, qtbot, text, pair)
        expected = reference.classify(text, pairs=pair or None)
        assert outcome.classification.label == expected.label
        shown = dict(tab.labels_model.rows())
        by_probability = sorted(expected.probabilities, key=lambda label: -expected.probabilities[label])
        assert list(shown) == by_probability
        for label, probability in expected.probabilities.items():
            assert shown[label] == pytest.approx(probability, abs=1e-6)
        headline = f"{expected.label} · {probability_text(expected.probability)}"
        assert tab.headline_label.text() == headline
    assert not tab.pair_edit.isHidden() and tab.aggregation_combo.isHidden()
    assert "Classifier, 3 labels: neg, pos, mixed" in tab.head_label.text()


def test_a_tagger_highlights_exactly_the_spans_tag_returns(tab, qtbot, models):
    from kbert.models import BertTokenClassifier

    tab.context.models.set_source(str(models["tagger"]))
    outcome = _predict(tab, qtbot, TAGGED_TEXT)
    expected = BertTokenClassifier.from_preset(models["tagger"]).tag(TAGGED_TEXT)
    assert len(expected) >= 5
    assert outcome.entities == tuple(expected)
    # The highlights, read back from Qt's UTF-16 positions, are the spans' characters.
    assert tab.text_edit.highlighted_spans() == [(s.start, s.end, s.text) for s in expected]
    assert all(TAGGED_TEXT[s.start : s.end] == s.text for s in expected)
    # Every word is a person here, the emoji (an unknown word) too: a span of two UTF-16
    # units, then spans after one and after two of them.
    assert [(s.text, s.start) for s in expected[:2]] == [("😀", 0), ("alice", 2)]
    assert [s.text for s in expected[-3:]] == ["in", "paris", "."]
    assert "🐈" in [s.text for s in expected]
    model = tab.entities_model
    assert [model.entity(row) for row in range(model.rowCount())] == list(expected)
    assert tab.head_label.text().startswith("Tagger, entity types: PER, LOC.")
    assert "PER" in tab.legend_label.text()
    # The head was saved untrained (only its bias was set): the tab says so.
    assert "was never trained (token_classifier_head)" in tab.head_warning.message

    # An edit clears the stale highlights at once; the new text gets its own.
    tab.text_edit.textCursor().insertText("bob ")
    assert tab.text_edit.highlighted_spans() == []
    qtbot.waitUntil(lambda: tab.outcome.text == tab.text_edit.text(), timeout=TIMEOUT_MS)
    assert tab.text_edit.highlighted_spans()[0][2] == "bob"


def test_a_model_without_a_classifier_or_tagger_head_says_so(tab, qtbot, models):
    tab.context.models.set_source(str(models["backbone"]))
    tab.set_text("a lovely cat")
    qtbot.waitUntil(lambda: bool(tab.head_warning.message), timeout=TIMEOUT_MS)
    assert "has no classifier, tagger or multiple-choice head" in tab.head_warning.message
    assert tab.outcome is None and tab.labels_model.rowCount() == 0
    with qtbot.waitSignal(tab.context.tab_requested) as requested:
        tab.head_warning.linkActivated.emit(TabKey.FINE_TUNING.value)
    assert requested.args == [TabKey.FINE_TUNING]

    # The other link opens the bundled spam filter here, and it classifies at once.
    assert 'href="model:demo-spam"' in tab.head_warning.message
    with qtbot.waitSignal(tab.context.tab_requested) as requested:
        tab.head_warning.linkActivated.emit("model:demo-spam")
    assert requested.args == [TabKey.CLASSIFY]
    assert tab.context.models.source == "demo-spam"
    tab.set_text("WINNER!! You have won a £900 prize. Call 09061701461 to claim now")
    qtbot.waitUntil(
        lambda: tab.outcome is not None and tab.outcome.classification is not None,
        timeout=TIMEOUT_MS,
    )
    assert tab.head_warning.message == ""
    assert tab.outcome.classification.label == "spam"


def test_exports_parse_and_match_what_is_shown(tab, qtbot, tmp_path, models):
    outcome = _predict(tab, qtbot, "a lovely cat")
    csv_action, json_action, *saliency_actions = tab.export_actions()
    assert [action.label for action in saliency_actions] == [
        "Saliency as CSV…", "Saliency as JSON…"
    ]
    assert not any(action.available() for action in saliency_actions)  # nothing explained yet
    csv_action.write(tmp_path / "labels.csv")
    with open(tmp_path / "labels.csv", encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(row["label"], float(row["probability"])) for row in rows] == tab.labels_model.rows()
    json_action.write(tmp_path / "labels.json")
    document = json.loads((tmp_path / "labels.json").read_text(encoding="utf-8"))
    assert document["label"] == outcome.classification.label
    assert document["probabilities"] == outcome.classification.probabilities
    assert document["model"] == str(models["classifier"]) and document["text"] == "a lovely cat"

    tab.context.models.set_source(str(models["tagger"]))
    assert not csv_action.available()  # the old model's result is gone
    outcome = _predict(tab, qtbot, TAGGED_TEXT)
    assert csv_action.available()
    csv_action.write(tmp_path / "entities.csv")
    with open(tmp_path / "entities.csv", encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(row["label"], row["text"], int(row["start"]), int(row["end"])) for row in rows] == [
        (span.label, span.text, span.start, span.end) for span in outcome.entities
    ]
    json_action.write(tmp_path / "entities.json")
    document = json.loads((tmp_path / "entities.json").read_text(encoding="utf-8"))
    assert [TAGGED_TEXT[e["start"] : e["end"]] for e in document["entities"]] == [
        span.text for span in outcome.entities
    ]


# --- End to end: fine-tune in the app, then use the model -------------------------------


@pytest.mark.every_backend
def test_fine_tune_a_classifier_and_a_tagger_in_the_app_then_use_them(qtbot, tmp_path, models):
    from kbert.models import BertClassifier
    from kbert.models import BertTokenClassifier

    window = open_window(qtbot, tmp_path, models["backbone"])
    tuning = window.tab(TabKey.FINE_TUNING)
    classify = window.tab(TabKey.CLASSIFY)

    def train(task, data, output, **settings):
        set_up_run(tuning, qtbot, data, output, task=task, **settings)
        tuning.probe_input.set_values(text="")
        # "Open in Classify & tag": a classifier or tagger lands there, which runs the
        # model's own head (no random mask predictions).
        return run_and_open(window, qtbot)

    settings = dict(epochs=2, batch_size=8, learning_rate=1e-3, max_length=16)
    data = write_csv(tmp_path / "train.csv", classification_examples(32, seed=1))
    classifier_path = train("classification", data, tmp_path / "runs" / "sentiment", **settings)
    assert window.model_label.text() == "runs/sentiment (classifier: neg, pos)"
    text = "a great house near the river"
    outcome = _predict(classify, qtbot, text)
    assert classify.head_warning.message == ""  # a trained head: no warning
    expected = BertClassifier.from_preset(classifier_path).classify(text)
    assert outcome.classification.label == expected.label
    for label, probability in expected.probabilities.items():
        assert outcome.classification.probabilities[label] == pytest.approx(probability, abs=1e-6)

    window.show_tab(TabKey.FINE_TUNING)
    conll = _write_conll(tmp_path / "train.conll", token_classification_examples(48, seed=1))
    settings.update(epochs=4, learning_rate=5e-3, max_length=32)
    tagger_path = train("token-classification", conll, tmp_path / "runs" / "names", **settings)
    assert window.model_label.text() == "runs/names (tagger: LOC, PER)"
    outcome = _predict(classify, qtbot, TAGGED_TEXT)
    expected = BertTokenClassifier.from_preset(tagger_path).tag(TAGGED_TEXT)
    assert outcome.entities == tuple(expected)
    assert classify.text_edit.highlighted_spans() == [(s.start, s.end, s.text) for s in expected]
    stop_context(window.context)
