"""What the fine-tuning tab says about each task, from kbert's task specs."""

from kbert.finetuning.task_specs import TASK_SPECS
from kbert_gui.services.model_description import tab_of_class

# How a file dialog names each kind of training data (`TaskSpec.data_kind`).
DATA_KIND_FILES = {
    "table": "Tables",
    "conll": "CoNLL files",
    "squad": "SQuAD files",
    "choices": "Multiple-choice files",
    "text": "Text files",
}
# task name: (label, file-dialog filter)
TASKS = {
    name: (
        spec.title,
        f"{DATA_KIND_FILES[spec.data_kind]} ("
        + " ".join(f"*.{extension}" for extension in spec.file_types)
        + ");;All files (*)",
    )
    for name, spec in TASK_SPECS.items()
}
# task name: the `TabKey` of the tab that uses the model a run of the task saves.
OPEN_TAB = {name: tab_of_class(spec.head) for name, spec in TASK_SPECS.items()}
TASK_TOOLTIP = "<br>".join(
    f"<b>{spec.title}</b>: {spec.description}." for spec in TASK_SPECS.values()
)
# data kind: the line under the file fields
DATA_HELP = {
    "table": "Map the file's columns below; rows the reader rejects are marked red.",
    "conll": (
        "CoNLL: one word per line, its tag in the last column, a blank line between "
        "sentences."
    ),
    "squad": "SQuAD JSON: data → paragraphs → context and qas (question, answers).",
    "choices": (
        "Multiple choice: SWAG CSV (sent1, sent2, ending0, ending1, ..., label) or JSON "
        "Lines (context, endings, label)."
    ),
    "text": "Plain text: one sentence or paragraph per line, documents separated by blank lines.",
}
