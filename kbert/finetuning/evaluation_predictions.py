"""Every example of a labelled file beside the model's prediction, and the scores from them."""

import csv
import dataclasses
import io
import json
import pathlib

PREDICTION_FORMATS = (".csv", ".jsonl")


@dataclasses.dataclass(frozen=True)
class EvaluationPredictions:
    """What a task model predicts on each example of a labelled file.

    `FineTuningRecipe.evaluation_predictions` builds it; the task's scores (what
    `FineTuningRecipe.evaluate` returns) are computed from these very rows, so a row
    count and the scores always agree.

    Every row is a dict with the keys `columns`, in file order: `index` (0-based), the
    example's text fields, `gold`, `predicted`, `probability` (the model's probability
    of its prediction; for taggers the lowest over the words) and `correct`; per task:

    - (pair-)classification: `line`, `text` (`pair`); gold and predicted labels.
    - token-classification: `line`, `text` (the words joined by spaces); gold and
      predicted tags per word; `gold_entities`, `predicted_entities`, `missed` and
      `spurious`, each a list of `[type, start, end, words]` (word positions, end
      exclusive); correct when the entities agree.
    - qa: `id`, `question`, `context`; gold answer texts, the predicted text ("" for no
      answer); `exact_match` and `f1` of the question (percent, as SQuAD scores them).
    - multiple-choice: `line`, `context`, `endings`; gold and chosen ending indices,
      `gold_ending`, `predicted_ending`.

    Attributes:
        task: the task name ("classification", "qa", ...).
        columns: the keys of every row, in order.
        rows: the rows (dicts), one per example.
        scores: the task's scores, as `evaluate` returns them.
        label_names: a classifier's classes in the model's order; None for other tasks.
        entity_types: a tagger's scores per entity type (`kbert.metrics.entity_scores_by_type`);
            None for other tasks.
    """

    task: str
    columns: tuple
    rows: tuple
    scores: dict
    label_names: tuple = None
    entity_types: dict = None

    def confusion_matrix(self):
        """`(labels, counts)`: `counts[i][j]` examples of gold `labels[i]` predicted `labels[j]`.

        The labels are the classifier's classes (classification tasks only).
        """
        if self.label_names is None:
            raise ValueError(f"A confusion matrix needs a classifier. Received: task={self.task!r}")
        labels = list(self.label_names)
        position = {label: index for index, label in enumerate(labels)}
        counts = [[0] * len(labels) for _ in labels]
        for row in self.rows:
            counts[position[row["gold"]]][position[row["predicted"]]] += 1
        return labels, counts

    def write(self, path):
        """Writes the rows to `path`: CSV for a ".csv" name, JSON Lines for ".jsonl".

        CSV cells holding lists (tags, entities, answers) are JSON text. The file is
        written beside the target and renamed over it.
        """
        from kbert.files.atomic_write import write_text_atomically

        write_text_atomically(path, self.file_text(prediction_format(path)))

    def file_text(self, suffix):
        """The text of a predictions file: `suffix` ".csv" or ".jsonl"."""
        if suffix == ".jsonl":
            return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in self.rows)
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow([csv_cell(row[column]) for column in self.columns])
        return buffer.getvalue()


def prediction_format(path):
    """".csv" or ".jsonl", from the name `path`; a ValueError for any other."""
    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in PREDICTION_FORMATS:
        raise ValueError(
            f"A predictions file must end in .csv or .jsonl. Received: {str(path)!r}"
        )
    return suffix


def csv_cell(value):
    """One CSV cell: lists and dicts as JSON text, None empty, numbers and text as they are."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value
