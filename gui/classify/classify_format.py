"""What the "Classify & tag" tab writes and paints: label colours, headlines, exports.

Pure functions of kbert's results and the model's description, no widgets, so each
line and each exported row can be checked on its own.
"""

from kbert_gui import BUNDLED_CLASSIFIER
from kbert_gui.classify.classify_head import CHOOSE_VERB
from kbert_gui.classify.classify_head import CLASSIFY_VERB
from kbert_gui.classify.classify_head import TAG_VERB
from kbert_gui import MODEL_LINK_PREFIX
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets import style
from kbert_gui.widgets.probability_text import probability_text

NO_HEAD_MESSAGE = (
    "{name} has no classifier, tagger or multiple-choice head, so there is nothing to run "
    "here. Fine-tune it for a classification, token-classification or multiple-choice task "
    f"({TabKey.FINE_TUNING.link}) and open the result, or open a fine-tuned model (File ▸ "
    "Open model…), or try the bundled spam filter for short messages: "
    f'<a href="{MODEL_LINK_PREFIX}{BUNDLED_CLASSIFIER}">open {BUNDLED_CLASSIFIER}</a>.'
)
UNTRAINED_HEAD_MESSAGE = (
    "The {kind} head of this model was never trained ({heads}), so its results are "
    f"random: fine-tune it first ({TabKey.FINE_TUNING.link})."
)
NOT_SHOWN_MESSAGE = "{name} is a {kind} model: this tab does not show its results{where}."
SINGLE_TEXT_PAIR_NOTE = (
    "This classifier was trained on single texts ({task}), never on pairs: it reads the "
    "second text as more of the first, so its labels may mean little. Leave the second "
    "text empty, or fine-tune a pair classifier."
)
MISSING_PAIR_NOTE = (
    "This classifier was trained on text pairs ({task}): type the second text too."
)
# What a classifier asks to type: by whether it was trained on pairs (None: not known).
CLASSIFIER_INPUTS = {
    None: "Type a text (and a second text for pair classification).",
    False: "Type a text (it was trained on single texts).",
    True: "Type a text and its second text (it was trained on pairs).",
}
CLASSIFICATION_COLUMNS = ("label", "probability")
ENTITY_COLUMNS = ("label", "text", "start", "end", "score")
CHOICE_COLUMNS = ("index", "ending", "probability", "chosen")
VALUE_COLUMNS = ("text", "value")


def entity_colors(entity_types):
    """`{entity type: "#rrggbb"}`: `style.ENTITY_COLORS` in the order of `entity_types`."""
    palette = style.ENTITY_COLORS
    return {name: palette[index % len(palette)] for index, name in enumerate(entity_types)}


def head_summary(description, head):
    """The line above the input: what the model's head (`ClassifyHead`) does with a text."""
    if head.verb == CLASSIFY_VERB:
        count = len(description.label_names)
        return (
            f"Classifier, {count} labels: {', '.join(description.label_names)}. "
            + CLASSIFIER_INPUTS[head.trained_on_pairs]
        )
    if head.verb == TAG_VERB:
        return (
            f"Tagger, entity types: {', '.join(description.entity_types) or 'none'}. "
            "Type a text to find its entities."
        )
    if head.verb == CHOOSE_VERB:
        return (
            "Multiple choice: type a context and its candidate endings; each ending gets "
            "its probability of continuing the context."
        )
    if head.shown:
        return f"{description.kind.capitalize()}: type a text to see its {head.verb} result."
    return ""


def pair_note(head, pair):
    """A line on the second text when it does not suit the model (a classifier trained
    on single texts given one, or one trained on pairs given none), else ""."""
    trained_on_pairs = head.trained_on_pairs
    if trained_on_pairs is False and pair:
        return SINGLE_TEXT_PAIR_NOTE.format(task=head.trained_task.title)
    if trained_on_pairs and not pair:
        return MISSING_PAIR_NOTE.format(task=head.trained_task.title)
    return ""


def value_headline(value):
    """Another head's result in one line: a number to four significant digits."""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def classification_headline(classification):
    """The predicted label with its probability, e.g. "pos · 87.3 %"."""
    return f"{classification.label} · {probability_text(classification.probability)}"


def choice_headline(choice):
    """The chosen ending with its number and probability: "2. and left. · 87.3 %"."""
    return f"{choice.index + 1}. {choice.ending} · {100 * choice.probability:.1f} %"


def entities_headline(entities):
    """How many entities were found, by type: "3 entities: PER ×2, LOC"."""
    if not entities:
        return "No entities found."
    counts = {}
    for span in entities:
        counts[span.label] = counts.get(span.label, 0) + 1
    parts = [label if count == 1 else f"{label} ×{count}" for label, count in counts.items()]
    noun = "entity" if len(entities) == 1 else "entities"
    return f"{len(entities)} {noun}: {', '.join(parts)}"


def span_tooltip(span):
    """The tooltip of a highlighted entity."""
    return f"{span.label} · {probability_text(span.score)} · characters {span.start}–{span.end}"


def export_rows(outcome, label_rows):
    """The rows a CSV export writes: what the tables show, in their order.

    Args:
        outcome: the shown `ClassifyOutcome`.
        label_rows: the classification table's `(label, probability)` rows, as shown
            (classifiers; a choice's rows are its endings in order).

    Returns:
        `(columns, rows)`: the CSV header and one dict per row.
    """
    if outcome.classification is not None:
        rows = [{"label": label, "probability": probability} for label, probability in label_rows]
        return CLASSIFICATION_COLUMNS, rows
    if outcome.choice is not None:
        choice = outcome.choice
        rows = [
            {"index": index, "ending": ending, "probability": probability,
             "chosen": index == choice.index}
            for index, (ending, probability) in enumerate(zip(choice.endings, choice.probabilities))
        ]
        return CHOICE_COLUMNS, rows
    if outcome.value is not None:
        return VALUE_COLUMNS, [{"text": outcome.text, "value": outcome.value}]
    rows = [
        {"label": span.label, "text": span.text, "start": span.start, "end": span.end,
         "score": span.score}
        for span in outcome.entities
    ]
    return ENTITY_COLUMNS, rows


def export_document(outcome):
    """The JSON export: the model, the input, and the full result."""
    document = {"model": outcome.source, "model_class": outcome.description.class_name,
                "text": outcome.text}
    if outcome.classification is not None:
        classification = outcome.classification
        document.update(
            pair=outcome.pair,
            label=classification.label,
            probability=classification.probability,
            probabilities=dict(classification.probabilities),
        )
    elif outcome.choice is not None:
        choice = outcome.choice
        document.update(
            context=document.pop("text"),
            endings=list(choice.endings),
            index=choice.index,
            ending=choice.ending,
            probability=choice.probability,
            probabilities=list(choice.probabilities),
        )
    elif outcome.value is not None:
        document["value"] = outcome.value
    else:
        document["entities"] = [
            {"label": span.label, "start": span.start, "end": span.end, "text": span.text,
             "score": span.score}
            for span in outcome.entities
        ]
    return document
