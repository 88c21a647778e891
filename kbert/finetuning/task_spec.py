"""What one fine-tuning task is, declared once for the registry, the CLI and the app."""

import dataclasses
import importlib

from kbert.model_table import MODEL_CLASSES


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """One task kbert fine-tunes on, as plain data (importing it loads no Keras).

    `kbert.finetuning.make_recipe`, `kbert finetune --task`, the app's task list, its data
    preview, column mapping and probe all read these fields. A task is one `TaskSpec`
    (`kbert.finetuning.task_specs.register_task`) beside its recipe class, and its
    head's model class with its row of the model table (`kbert.model_table`); two tasks
    may share a head (classification and pair classification).

    Attributes:
        name: the name users type ("classification", "qa", ...).
        title: a short human name ("Text classification").
        description: one sentence about the task and its data, for help texts.
        data_kind: the training file's kind: "table" (CSV/TSV/JSON Lines), "conll",
            "squad", "choices" (multiple choice: SWAG CSV or JSON Lines) or "text"
            (plain text, for continued pretraining).
        file_types: the file extensions the task reads, for file dialogs.
        columns: for table data, the column roles and their default names, in order
            (e.g. `(("text", "text"), ("label", "label"))`); empty for other kinds.
        head: the task model's class, a row of `kbert.model_table.MODEL_CLASSES`.
        metrics: the scores evaluation reports, the selection metric first.
        probe_fields: the inputs of a probe (an example predicted while training), in
            the order the model's inference verb takes them.
        recipe: "module:Class" of the `FineTuningRecipe` that trains it, or None for a
            task another loop runs (continued pretraining: `kbert.pretraining`).
        recipe_options: fixed options of the recipe (e.g. the pair column).
        probe_options: fixed keyword arguments of the inference verb for a probe
            (e.g. `(("top_k", 3),)`).
    """

    name: str
    title: str
    description: str
    data_kind: str
    file_types: tuple
    columns: tuple
    head: str
    metrics: tuple
    probe_fields: tuple
    recipe: str = None
    recipe_options: tuple = ()
    probe_options: tuple = ()

    @property
    def metric(self):
        """The score that selects the best epoch (higher is better)."""
        return self.metrics[0]

    @property
    def runs_pretraining(self):
        """Whether `kbert.pretraining.ContinuedPretraining` runs it (not `FineTuner`)."""
        return self.recipe is None

    def recipe_class(self):
        """The `FineTuningRecipe` class (imported now: it may load Keras)."""
        if self.recipe is None:
            raise ValueError(f"The task {self.name!r} is run by kbert.pretraining, not FineTuner.")
        module, _, name = self.recipe.partition(":")
        return getattr(importlib.import_module(module), name)

    def predict(self, model, probe):
        """The task model's prediction for `probe` (a dict of `probe_fields`).

        The model answers with its class's inference verb (the model table's
        `inference_verb`: `model.classify(text, pair)`, `model.answer(question,
        context, top_k=3)`, ...), the probe's fields in `probe_fields` order.
        """
        missing = [field for field in self.probe_fields if not probe.get(field)]
        if missing:
            raise ValueError(f"The probe of {self.name!r} needs {missing}. Received: {probe!r}")
        verb = inference_verb(type(model))
        arguments = [probe[field] for field in self.probe_fields]
        arguments = [list(value) if isinstance(value, tuple) else value for value in arguments]
        return getattr(model, verb)(*arguments, **dict(self.probe_options))


def inference_verb(cls):
    """The inference verb of the model class `cls`: that of the first class of its method
    resolution order with one in the model table."""
    for klass in cls.__mro__:
        row = MODEL_CLASSES.get(klass.__name__)
        if row is not None and row.inference_verb is not None:
            return row.inference_verb
    raise ValueError(
        f"`model` must be a model class with an inference verb in kbert.model_table. "
        f"Received: {cls.__name__}"
    )
