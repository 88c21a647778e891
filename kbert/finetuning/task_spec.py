"""What one fine-tuning task is, declared once for the registry, the CLI and the app."""

import dataclasses
import importlib


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """One task kbert fine-tunes on, as plain data (importing it loads no Keras).

    `kbert.finetuning.make_adapter`, `kbert finetune --task`, the app's task list, its data
    preview, column mapping and probe all read these fields; adding a task is one more
    `TaskSpec` in `kbert.finetuning.task_specs` plus its adapter class and head.

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
        head: the task model's class name in `kbert.models`.
        metrics: the scores evaluation reports, the selection metric first.
        probe_fields: the inputs of a probe (an example predicted while training).
        adapter: "module:Class" of the `FineTuningAdapter` that trains it, or None for a
            task another loop runs (continued pretraining: `kbert.pretraining`).
        adapter_options: fixed options of the adapter (e.g. the pair column).
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
    adapter: str = None
    adapter_options: tuple = ()

    @property
    def metric(self):
        """The score that selects the best epoch (higher is better)."""
        return self.metrics[0]

    @property
    def runs_pretraining(self):
        """Whether `kbert.pretraining.ContinuedPretraining` runs it (not `FineTuner`)."""
        return self.adapter is None

    def adapter_class(self):
        """The `FineTuningAdapter` class (imported now: it may load Keras)."""
        if self.adapter is None:
            raise ValueError(f"The task {self.name!r} is run by kbert.pretraining, not FineTuner.")
        module, _, name = self.adapter.partition(":")
        return getattr(importlib.import_module(module), name)

    def predict(self, model, probe):
        """The task model's prediction for `probe` (a dict of `probe_fields`)."""
        missing = [field for field in self.probe_fields if not probe.get(field)]
        if missing:
            raise ValueError(f"The probe of {self.name!r} needs {missing}. Received: {probe!r}")
        if self.head == "BertClassifier":
            return model.classify(probe["text"], pairs=probe.get("pair"))
        if self.head == "BertTokenClassifier":
            return model.tag(probe["text"])
        if self.head == "BertQuestionAnswerer":
            return model.answer(probe["question"], probe["context"], top_k=3)
        if self.head == "BertMultipleChoice":
            return model.choose(probe["context"], list(probe["endings"]))
        return model.fill_mask(probe["text"], top_k=5)
