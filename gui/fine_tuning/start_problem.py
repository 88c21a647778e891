"""Why the fine-tuning form cannot start (or resume) a run now, in one sentence."""

import pathlib

from kbert_gui.fine_tuning.column_mapping_form import CHOOSE_LABEL
from kbert_gui.fine_tuning.training_data_preview import DATA_KINDS


def start_problem(panel, setup, resume_checker, task, train, output, resume):
    """Why a run of the form cannot start now, or None when it can.

    Start and Resume ask it before they submit a job, and Resume is enabled only where
    it returns None, so that a click never ends in a refusal (nor in kbert's words).

    Args:
        panel: the `FineTuningPanel`.
        setup: its `FineTuningSetupController` (the data preview).
        resume_checker: its `ResumeChecker` (the run folder's checkpoint).
        task: the form's task name.
        train: the form's training file ("" for none).
        output: the form's run folder ("" for none).
        resume: whether the run would resume from the folder's checkpoint.
    """
    preview = setup.preview
    mapping = panel.column_form.mapping()
    if not panel.hyperparameters.is_ready:
        return "The hyperparameters are still loading."
    if not train:
        return "Choose a training file."
    if not output:
        return "Choose a run folder."
    if DATA_KINDS[task] == "table" and mapping is not None and mapping["label_column"] is None:
        return CHOOSE_LABEL
    if preview is not None and preview.path == train and preview.error:
        return f"Fix the training data first: {preview.error}"
    if DATA_KINDS[task] == "table" and mapping is None:
        return "The training file's columns are not known yet."
    folder = pathlib.Path(output).expanduser()
    if not resume and folder.is_dir() and any(folder.iterdir()):
        if resume_checker.has_checkpoint():
            return (
                f"The run folder {folder} is not empty: it holds a run, which Resume "
                "continues; for a new run, choose an empty folder."
            )
        return f"The run folder {folder} is not empty: choose an empty or a new folder."
    check = resume_checker.check
    if resume and not (resume_checker.is_current(check) and check.compatible):
        return (check.sentence() if check is not None else "") or (
            "The run folder holds no run to resume."
        )
    return None
