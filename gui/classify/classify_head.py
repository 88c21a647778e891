"""What the "Classify & tag" tab runs for a model, read from kbert's model and task tables."""

import dataclasses

from kbert.finetuning.task_specs import TASK_SPECS
from kbert.finetuning.task_specs import tasks_with_head
from kbert.model_table import MODEL_CLASSES
from kbert_gui.tab_key import TabKey

# The tab's inputs, by the names of the task table's `probe_fields`.
TEXT_FIELDS = ("text", "context")
PAIR_FIELD = "pair"
ENDINGS_FIELD = "endings"
TAB_FIELDS = TEXT_FIELDS + (PAIR_FIELD, ENDINGS_FIELD)
# The verbs whose results the tab draws in their own view; any other verb's result is
# shown as one value (`ClassifyOutcome.value`).
CLASSIFY_VERB = "classify"
TAG_VERB = "tag"
CHOOSE_VERB = "choose"
# A multiple-choice model needs this many endings.
MIN_ENDINGS = 2


@dataclasses.dataclass(frozen=True)
class ClassifyHead:
    """A model's head as the tab uses it: its verb, its inputs, what it was trained on.

    Read from the model's row in the model table (`kbert.model_table`: inference verb,
    app kind and tab) and the rows of the task table whose head it is
    (`kbert.finetuning.task_specs`: the verb's inputs, `probe_fields`), so a task a
    package adds runs here without a change to the app.

    Attributes:
        class_name: the model's class ("BertClassifier").
        kind: what it does, in the app's words ("classifier").
        verb: the method that answers one input ("classify"), or None.
        fields: the verb's inputs in its argument order, over all the tasks of the
            class ("text", "pair"); ("text",) for a class no task trains.
        shown: whether this tab runs the model (its row's tab, a verb, inputs the tab has).
        trained_task: the `TaskSpec` the model was fine-tuned for (its metadata's
            "fine_tuning" record), or None when not known.
    """

    class_name: str
    kind: str
    verb: str = None
    fields: tuple = ("text",)
    shown: bool = False
    trained_task: object = None

    @classmethod
    def of(cls, description):
        """The head of a `ModelDescription`'s model."""
        row = MODEL_CLASSES.get(description.class_name)
        if row is None:
            return cls(description.class_name, description.kind)
        fields = []
        for spec in tasks_with_head(row.name):
            fields.extend(field for field in spec.probe_fields if field not in fields)
        fields = tuple(fields) or ("text",)
        shown = (
            TabKey(row.app_tab) == TabKey.CLASSIFY
            and row.inference_verb is not None
            and set(fields) <= set(TAB_FIELDS)
        )
        record = description.metadata.get("fine_tuning")
        task = record.get("task") if isinstance(record, dict) else None
        trained_task = TASK_SPECS.get(task) if isinstance(task, str) else None
        if trained_task is not None and trained_task.head != row.name:
            trained_task = None
        return cls(row.name, description.kind, row.inference_verb, fields, shown, trained_task)

    @property
    def takes_pair(self):
        """Whether the verb takes a second text (a classifier of pairs or of single texts)."""
        return self.shown and PAIR_FIELD in self.fields

    @property
    def takes_endings(self):
        """Whether the verb picks among endings (multiple choice)."""
        return self.shown and ENDINGS_FIELD in self.fields

    @property
    def trained_on_pairs(self):
        """True or False when the model's task is known and the verb takes a pair, else None."""
        if not self.takes_pair or self.trained_task is None:
            return None
        return PAIR_FIELD in self.trained_task.probe_fields

    def arguments(self, text, pair=None, endings=None):
        """The verb's positional arguments for the tab's inputs, in `fields` order."""
        inputs = {PAIR_FIELD: pair, ENDINGS_FIELD: None if endings is None else list(endings)}
        return [text if field in TEXT_FIELDS else inputs[field] for field in self.fields]

    def is_ready(self, text, endings=None):
        """Whether the inputs are enough to predict: a text, and two endings to choose from."""
        if not text.strip():
            return False
        return not self.takes_endings or len(endings or ()) >= MIN_ENDINGS
