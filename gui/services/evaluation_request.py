"""What to evaluate: a model, a labelled file and the task, and the work that does it."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class EvaluationRequest:
    """A model scored on a labelled file, row by row.

    `run(worker, models)` is the work for an inference worker: it reads the file with the
    task's reader, loads the task model through the `ModelStore` and returns kbert's
    `EvaluationPredictions` (every example, its prediction and the scores from them).

    Attributes:
        source: the model (a preset folder or any model source kbert resolves).
        task: the task name ("classification", "token-classification", "qa", ...).
        data_path: the labelled file.
        columns: the task reader's column options (`kbert.finetuning.make_recipe`'s).
        max_length: the longest input in tokens (a fine-tuning run's own), or None for
            the model's limit.
    """

    source: str
    task: str
    data_path: str
    columns: tuple = ()
    max_length: int = None

    @property
    def title(self):
        """"dev.csv — runs/sentiment" for a window title: the model named as the
        window's header names it (`short_name`)."""
        from pathlib import Path

        from kbert_gui.services.model_description import short_name

        return f"{Path(self.data_path).name} — {short_name(self.source)}"

    def run(self, worker, models):
        from kbert.finetuning import make_recipe
        from kbert.finetuning.task_specs import task_spec

        spec = task_spec(self.task)
        if spec.runs_pretraining:
            raise ValueError(f"{spec.title} has no labelled examples to browse.")
        task = make_recipe(self.task, **dict(self.columns))
        examples = task.read(self.data_path)
        if not examples:
            raise ValueError(f"{self.data_path} holds no examples.")
        model = models.model(spec.head, self.source)
        if model.freshly_initialized_heads:
            raise ValueError(
                f"The model {self.source} has no trained {spec.title.lower()} head, so its "
                "predictions would be noise: fine-tune it for this task first."
            )
        if worker.is_cancelled():
            return None
        return task.evaluation_predictions(model, examples, max_length=self.max_length)
