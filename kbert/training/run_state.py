"""Where a training run starts: afresh in an empty folder, or where its checkpoint left it."""

import logging
import os
import pathlib
import shutil

logger = logging.getLogger("kbert.training")

# Inside a run's output folder (fine-tuning and pretraining alike): the saved model and
# the training checkpoint.
MODEL_FOLDER = "model"
CHECKPOINT_FILE = "training_checkpoint.h5"

# The keys of a run's identity that name the model it started from (see `model_source`).
MODEL_SOURCE_KEYS = ("init_from", "preset")


def start_state(checkpoint, output_dir, identity, fresh, resume, growing=(), overwrite=False):
    """The state a run starts from.

    Args:
        checkpoint: the run's `TrainingCheckpoint`.
        output_dir: the run's folder (`pathlib.Path`).
        identity: what a resumed run must share with the one that wrote the
            checkpoint (settings, data fingerprint, model): a dict of plain data.
        fresh: the rest of a new run's state (counters at zero, empty history).
        resume: continue from the checkpoint when there is one.
        growing: settings of `identity["config"]` that a resumed run may raise (the
            length of the run: epochs, steps), extending a run, finished or not; the
            learning-rate schedule is then the longer run's from where it stopped.
        overwrite: start afresh in a folder that holds a run (its files are deleted).

    Returns:
        The checkpoint's state when resuming, else `dict(identity, **fresh)`.

    Raises:
        ValueError: when resuming with other settings than the checkpoint's (the
            message names each difference), or when a new run finds its folder in use.
    """
    if overwrite:
        clear_run_folder(output_dir, checkpoint)
    if resume and checkpoint.exists():
        state = checkpoint.read_state()
        saved = {key: state.get(key) for key in identity}
        for key in MODEL_SOURCE_KEYS:
            if isinstance(saved.get(key), str):  # a checkpoint may predate absolute paths
                saved[key] = model_source(saved[key])
        grown = _grown_settings(saved, identity, growing)
        if grown:
            saved["config"] = dict(saved["config"], **{key: new for key, (_, new) in grown.items()})
        if saved != identity:
            raise ValueError(
                f"Cannot resume from {str(checkpoint.path)!r}: the run was started with "
                f"different settings ({describe_differences(saved, identity)}). Resume "
                "with the original settings, or start a new run in an empty folder."
            )
        for key, (old, new) in grown.items():
            logger.info("Extending the run in %s: %s %s -> %s.", output_dir, key, old, new)
            state["config"] = dict(state["config"], **{key: new})
        return state
    if resume:
        logger.info("No training checkpoint in %s: starting a new run.", output_dir)
    else:
        check_new_run_folder(output_dir)
    return dict(identity, **fresh)


def _grown_settings(saved, identity, growing):
    """`{key: (then, now)}` of the `growing` settings that are larger now."""
    then, now = saved.get("config") or {}, identity.get("config") or {}
    grown = {}
    for key in growing:
        old, new = then.get(key), now.get(key)
        if isinstance(old, int) and isinstance(new, int) and new > old:
            grown[key] = (old, new)
    return grown


def clear_run_folder(output_dir, checkpoint):
    """Deletes what `output_dir` holds when it holds a run (its training checkpoint);
    a folder holding anything else is refused, and an empty or missing one is left."""
    if not output_dir.exists() or not any(output_dir.iterdir()):
        return
    if not checkpoint.exists():
        raise ValueError(
            f"The output folder {str(output_dir)!r} holds no training run to start over "
            "(no training checkpoint): choose an empty folder."
        )
    logger.info("Starting over in %s: deleting the run it holds.", output_dir)
    for entry in output_dir.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def check_new_run_folder(output_dir):
    """Raises a `ValueError` when `output_dir` (a `pathlib.Path`) holds anything: a new
    run starts in an empty or a missing folder.

    The message is in plain words, for the app as much as for the command line (whose
    flag for resuming is its own business).
    """
    if output_dir.exists() and any(output_dir.iterdir()):
        raise ValueError(
            f"The output folder {str(output_dir)!r} is not empty: resume the run it holds, "
            "or choose an empty folder."
        )


def describe_differences(saved, current):
    """`key: then, now` for each setting that differs (`section.key` inside dicts)."""
    parts = []
    for key in current:
        if isinstance(current[key], dict) and isinstance(saved.get(key), dict):
            for name in sorted(set(current[key]) | set(saved[key])):
                then, now = saved[key].get(name), current[key].get(name)
                if then != now:
                    parts.append(f"{key}.{name}: {then!r} then, {now!r} now")
        elif saved.get(key) != current[key]:
            parts.append(f"{key}: {saved.get(key)!r} then, {current[key]!r} now")
    return "; ".join(parts)


def model_source(source):
    """How a run's identity names the model it started from: a local folder by its
    absolute path, so that `run/model` from one folder and `/work/run/model` from
    another are the same model when the run resumes; a preset name or a URL as given.

    >>> model_source("bert-base-uncased")
    'bert-base-uncased'
    """
    if isinstance(source, (str, os.PathLike)):
        path = pathlib.Path(source).expanduser()
        if path.is_dir():
            return str(path.resolve())
    return str(source)
