"""How the app writes a score: its name ("macro F1", "MCC") and its value ("87.5 %",
"0.412"), the same in the fine-tuning tab, the Runs view and the evaluation browser.

Pure functions, no Qt.
"""

from kbert.finetuning.task_specs import TASK_SPECS

# How the app names the logs `FineTuner` and `PretrainingLoop` report (the fine-tuning
# evaluation table's titles are these, capitalised); other keys lose their underscores.
METRIC_NAMES = {
    "epoch": "epoch",
    "loss": "training loss",
    "learning_rate": "learning rate",
    "accuracy": "accuracy",
    "macro_f1": "macro F1",
    "matthews_corrcoef": "MCC",
    "precision": "precision",
    "recall": "recall",
    "f1": "F1",
    "exact_match": "exact match",
    "mlm_loss": "MLM loss",
    "mlm_accuracy": "MLM accuracy",
    "nsp_loss": "NSP loss",
    "nsp_accuracy": "NSP accuracy",
}
# Scores shown as percentages, as probabilities are (MCC runs from -1 to 1: a number).
PERCENT_SCORES = (
    "accuracy", "macro_f1", "precision", "recall", "f1", "exact_match", "mlm_accuracy",
    "nsp_accuracy",
)


def metric_name(key):
    """A log's name in the tab's words: "exact_match" -> "exact match", "f1" -> "F1"."""
    return METRIC_NAMES.get(key, key.replace("_", " "))


def scores_in_percent(task_name):
    """Whether kbert reports the scores of `task_name` in percent already: SQuAD's, as
    its official script does; the other tasks' are fractions."""
    spec = TASK_SPECS.get(task_name)
    return spec is not None and spec.data_kind == "squad"


def score_text(key, value, in_percent=False):
    """A log's value as the tab writes it everywhere: scores as percentages with one
    decimal ("87.5 %"), the learning rate to three significant digits, other numbers
    (losses, MCC) to three decimals, counts as they are, "–" for None.

    Args:
        key: the log's name ("accuracy", "loss", ...).
        value: its value.
        in_percent: whether the run's scores are percentages already (`scores_in_percent`).
    """
    if value is None:
        return "–"
    if isinstance(value, (bool, int)) or not isinstance(value, float):
        return str(value)
    if key in PERCENT_SCORES:
        return f"{value if in_percent else 100 * value:.1f} %"
    if key == "learning_rate":
        return f"{value:.3g}"
    return f"{value:.3f}"
