"""Whether the run in a folder can be resumed with what the fine-tuning form would start."""

import dataclasses
import pathlib

from kbert.finetuning.task_specs import TASK_SPECS
from kbert.training.run_state import CHECKPOINT_FILE
from kbert_gui.fine_tuning.fine_tuning_job import MASKED_LM
from kbert_gui.fine_tuning.run_record import RunRecord
from kbert_gui.services.model_description import short_name


@dataclasses.dataclass(frozen=True)
class ResumeCheck:
    """What a run folder holds, compared with the form: task, data and model.

    Built by `run` in a worker (it reads the checkpoint's state through kbert and, for
    fine-tuning, the training file). The settings are not compared: Resume continues a
    run with its own (`settings`).

    Attributes:
        folder: the run folder checked.
        has_checkpoint: whether it holds a training checkpoint.
        differences: how the run differs from the form, each a phrase of a sentence
            ("is text classification, not question answering (squad)").
        settings: the run's hyperparameters for the form, or None where unknown.
        record: the folder's `RunRecord`, or None (none, or one refused).
        record_problem: why the folder's record is refused, in one sentence naming
            the file and the field, or "".
    """

    folder: str
    has_checkpoint: bool
    differences: tuple = ()
    settings: object = None
    record: object = None
    record_problem: str = ""

    @property
    def compatible(self):
        """Whether Resume may continue this run with the form's task, data and model."""
        return self.has_checkpoint and not self.differences

    def sentence(self):
        """One sentence on why Resume is off, or "" where it is not."""
        if not self.has_checkpoint or not self.differences:
            return ""
        parts = list(self.differences)
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        return f"Resume is off: the run in this folder {joined}."

    @classmethod
    def run(cls, models, folder, task, source, train, columns):
        """Reads the folder's checkpoint and compares it with the form. Call in a worker.

        Args:
            models: the app's `ModelStore` (names the form's model as a preset folder).
            folder: the run folder.
            task: the form's task name.
            source: the app's current model.
            train: the form's training file ("" for none).
            columns: the form's column mapping (tables), or None.
        """
        from kbert.training import TrainingCheckpoint

        folder = pathlib.Path(folder).expanduser()
        checkpoint = TrainingCheckpoint(folder / CHECKPOINT_FILE)
        if not checkpoint.exists():
            return cls(str(folder), False)
        try:
            record, record_problem = RunRecord.read(folder), ""
        except ValueError as error:
            # Checked whole before any of it is shown: a record refused shows nothing.
            record, record_problem = None, str(error)
        try:
            state = checkpoint.read_state()
        except ValueError as error:
            return cls(str(folder), True, (f"has a checkpoint kbert cannot read ({error})",))
        run_task = state["task"].get("task") if isinstance(state.get("task"), dict) else MASKED_LM
        differences = []
        if run_task != task:
            differences.append(f"is {_title(run_task)}, not {_title(task)}")
        started_from = state.get("init_from" if run_task == MASKED_LM else "preset")
        if started_from != str(models.preset_folder(source)):
            started, form = short_name(started_from), short_name(source)
            differences.append(f"started from the model {started}, not {form}")
        if run_task == task and train:
            data = _data_difference(state, record, task, train, columns)
            if data:
                differences.append(data)
        settings = _settings(state, record)
        return cls(str(folder), True, tuple(differences), settings, record, record_problem)


def _data_difference(state, record, task, train, columns):
    """How the run's training data differ from the form's file, or None."""
    if task == MASKED_LM:
        # kbert keeps the instances made, not the text they came from; the record has it.
        if record is not None and pathlib.Path(record.train) != pathlib.Path(train):
            return f"was trained on {pathlib.Path(record.train).name}, not {pathlib.Path(train).name}"
        return None
    from kbert.finetuning import make_recipe
    from kbert.finetuning import training_data_fingerprint

    form_task = make_recipe(task, **(columns or {}))
    if state["task"] != form_task.options():
        return "read other columns of its training file"
    try:
        examples = form_task.read(train)
    except ValueError:
        return "was trained on other data than the chosen training file (which cannot be read)"
    if state.get("training_data") != training_data_fingerprint(examples):
        return "was trained on other data than the chosen training file"
    return None


def _settings(state, record):
    """The run's hyperparameters as the form takes them."""
    if record is not None:
        return dict(record.settings)
    if isinstance(state.get("task"), dict) and isinstance(state.get("config"), dict):
        return dict(state["config"])  # a fine-tuning run: FineTuningConfig's own fields
    return None


def _title(task):
    spec = TASK_SPECS.get(task)
    return spec.title[0].lower() + spec.title[1:] if spec is not None else repr(task)

