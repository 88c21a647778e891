"""Why the fine-tuning form cannot start (or resume) a run now, in one sentence."""

import html
import itertools
import pathlib
import re

from kbert.finetuning.search_folder import JOURNAL_FILE as SEARCH_JOURNAL
from kbert_gui.fine_tuning.column_mapping_form import CHOOSE_LABEL
from kbert_gui.fine_tuning.fine_tuning_job import MASKED_LM
from kbert_gui.fine_tuning.search_form import SINGLE_RUN
from kbert_gui.fine_tuning.training_data_preview import DATA_KINDS

USE_SETUP_LINK = "use-setup"


def holds_search(output):
    """Whether the run folder `output` holds a search (its Optuna journal)."""
    return bool(output) and (pathlib.Path(output).expanduser() / SEARCH_JOURNAL).is_file()


def folder_beside(folder):
    """The first of "name-2", "name-3", ... beside `folder` that does not exist."""
    folder = pathlib.Path(folder).expanduser()
    stem = re.sub(r"-\d+$", "", folder.name)
    for number in itertools.count(2):
        candidate = folder.with_name(f"{stem}-{number}")
        if not candidate.exists():
            return candidate


def new_run_folder(resume_checker):
    """Where Start puts a new run instead of the run folder, or None for the folder itself.

    A folder holding another run (a checkpoint that does not fit the form: another
    task, data or model) is that run's; Start leaves it as it is and begins beside it.
    """
    check = resume_checker.check
    if resume_checker.is_current(check) and check.has_checkpoint and check.differences:
        return folder_beside(check.folder)
    return None


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
    searching = panel.search_form.kind() != SINGLE_RUN
    if searching and not resume:
        problem = _search_problem(panel, task)
        if problem:
            return problem
    folder = pathlib.Path(output).expanduser()
    if not resume and holds_search(output):
        if searching:
            return None  # the search continues where it stopped
        return (
            f"The run folder {folder} holds a search: choose that search under Search to "
            "continue it, or an empty folder for a single run."
        )
    if not resume and folder.is_dir() and any(folder.iterdir()):
        if resume_checker.has_checkpoint():
            if new_run_folder(resume_checker) is not None:
                return None  # another run's folder: Start begins beside it
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


def _search_problem(panel, task):
    """Why the form's search cannot start, or None."""
    if task == MASKED_LM:
        return "A search is for fine-tuning: continued pretraining has no dev metric to rank by."
    problem = panel.search_form.problem()
    if problem:
        return f"Fix the search: {problem}"
    if not panel.eval_file_edit.text().strip():
        return (
            "A search needs an evaluation file: the evaluation data rank the trials and "
            "pick the model kept."
        )
    return None


def resume_note(panel, check, problem):
    """The line under the run buttons about the run folder's run ("" for none).

    Args:
        panel: the `FineTuningPanel`.
        check: the folder's current `ResumeCheck`.
        problem: why Resume would be refused (`start_problem`), or None.
    """
    note = check.sentence()
    if note:
        note += f" Start begins a new run in {folder_beside(check.folder)}."
    if not note and holds_search(panel.output_edit.text().strip()):
        searching = panel.search_form.kind() != SINGLE_RUN
        note = "This folder holds a search: " + (
            "Start continues it (with the same search, data and model)."
            if searching
            else "choose it under Search, then Start continues it."
        )
    if not note and problem and panel.hyperparameters.is_ready:
        note = f"Resume is off: {problem[0].lower()}{problem[1:]}"
    if check.record_problem:
        note = f"{note} {check.record_problem}".strip()
    # The label shows rich text (the link); names of files and models stay plain.
    note = html.escape(note, quote=False)
    if note and check.record is not None:
        note += f' <a href="{USE_SETUP_LINK}">Use its setup</a>'
    return note
