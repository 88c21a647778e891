"""What a model is, in the words of the app: its name, its kind, the tab that uses it."""

import dataclasses
import pathlib

from kbert.model_table import MODEL_CLASSES
from kbert.training.run_state import MODEL_FOLDER as RUN_MODEL_FOLDER
from kbert_gui.tab_key import TabKey

# A label list longer than this is cut short in names ("… 12 labels").
MAX_NAMED_LABELS = 6
BIO_PREFIXES = ("B-", "I-", "E-", "S-", "L-", "U-")
BASE_MODEL_TAB = TabKey.MASKED_WORDS


@dataclasses.dataclass(frozen=True)
class ModelDescription:
    """A model source as the app presents it, read from its preset in a worker.

    Attributes:
        source: what the user opened (a preset name or folder, a checkpoint folder).
        folder: the kbert preset it resolved to (a converted copy for a checkpoint).
        class_name: the task class the preset was saved as, e.g. "BertClassifier".
        label_names: the classifier's labels or the tagger's tags, else ().
        metadata: the preset's metadata.json (versions, fine-tuning results), or {}.
    """

    source: str
    folder: pathlib.Path
    class_name: str
    label_names: tuple = ()
    metadata: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def read(cls, source, folder):
        """The description of `source`, whose kbert preset is `folder`. Call in a worker.

        Reads config.json and metadata.json through kbert's bounded reader; raises
        kbert's ValueError (naming the file) for a broken one.
        """
        from kbert.files.bounded_reader import read_json
        from kbert.checkpoints.kbert_preset import read_preset_config
        from kbert.checkpoints.kbert_preset import METADATA_FILE

        folder = pathlib.Path(folder)
        config = read_preset_config(folder)
        label_names = config["task"].get("label_names") or ()
        metadata = {}
        if (folder / METADATA_FILE).is_file():
            metadata = read_json(folder / METADATA_FILE, "config", folder)
            metadata = metadata if isinstance(metadata, dict) else {}
        return cls(
            source=str(source),
            folder=folder,
            class_name=config["class_name"],
            label_names=tuple(str(name) for name in label_names),
            metadata=metadata,
        )

    @property
    def kind(self):
        """What the model does, in words: "classifier", "tagger", "pretrained", ...
        (the model table's `app_kind`; the class name for a class without one)."""
        row = MODEL_CLASSES.get(self.class_name)
        return self.class_name if row is None or row.app_kind is None else row.app_kind

    @property
    def verb(self):
        """The model's inference verb ("classify", "tag", ...; the model table's), or None."""
        row = MODEL_CLASSES.get(self.class_name)
        return None if row is None else row.inference_verb

    @property
    def tab_key(self):
        """The `TabKey` of the tab that uses the model (`tab_of_class`)."""
        return tab_of_class(self.class_name)

    @property
    def is_fine_tuned(self):
        """True for a model with a task head of its own (classifier, tagger, QA,
        multiple choice, or a head a package added to the model table)."""
        return self.tab_key != BASE_MODEL_TAB

    @property
    def entity_types(self):
        """A tagger's entity types in tag order ("B-PER", "I-PER" -> "PER"), else ()."""
        if self.verb != "tag":
            return ()
        return entity_types(self.label_names)

    @property
    def title(self):
        """The name the window shows, e.g. "runs/sentiment (classifier: neg, pos)"."""
        if self.verb == "classify" and self.label_names:
            detail = f"{self.kind}: {_listed(self.label_names)}"
        elif self.entity_types:
            detail = f"{self.kind}: {_listed(self.entity_types)}"
        else:
            detail = self.kind
        return f"{short_name(self.source)} ({detail})"

    @property
    def details(self):
        """Lines for a tooltip: where it is, what it is, how it was trained."""
        lines = [self.source]
        if pathlib.Path(self.source).expanduser().absolute() != self.folder.absolute():
            lines.append(f"kbert preset: {self.folder}")
        labels = f", {len(self.label_names)} labels" if self.label_names else ""
        lines.append(f"{self.class_name}{labels}")
        fine_tuning = self.metadata.get("fine_tuning")
        if isinstance(fine_tuning, dict) and fine_tuning:
            lines.append(
                "fine-tuning: "
                + ", ".join(f"{key} {_number(value)}" for key, value in fine_tuning.items())
            )
        if "created" in self.metadata:
            lines.append(f"saved {self.metadata['created']}")
        return "\n".join(lines)


def tab_of_class(class_name):
    """The `TabKey` of the tab that uses a model of the task class `class_name` (the
    model table's `app_tab`): "Classify & tag" for a classifier, tagger or
    multiple-choice model, "Question answering" for a QA model, "Masked words" for a
    base model or a class the table does not hold."""
    row = MODEL_CLASSES.get(class_name)
    return BASE_MODEL_TAB if row is None else TabKey(row.app_tab)


def short_name(source):
    """A model's name from its source alone (no file is read).

    A run's saved model (`<run>/model`) is named after its run, "runs/sentiment"; any
    other folder after itself; a preset name or handle is itself.
    """
    source = str(source)
    path = pathlib.Path(source)
    if len(path.parts) <= 1 or "://" in source:
        return source
    if path.name == RUN_MODEL_FOLDER and len(path.parts) > 2:
        return f"{path.parent.parent.name}/{path.parent.name}"
    return path.name


def entity_types(tag_names):
    """The entity types of BIO/IOB/BIOES tags, in order of first appearance, without "O"."""
    types = []
    for tag in tag_names:
        name = tag[2:] if tag.startswith(BIO_PREFIXES) else tag
        if tag != "O" and name not in types:
            types.append(name)
    return tuple(types)


def _listed(names):
    if len(names) <= MAX_NAMED_LABELS:
        return ", ".join(names)
    return f"{', '.join(names[:MAX_NAMED_LABELS - 1])}, … {len(names)} labels"


def _number(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)
