"""What the fine-tuning tab writes: its log lines, status lines, table rows and probe.

Pure functions of kbert's results and the job's progress values, no Qt, so that each
line the tab shows can be checked on its own.
"""

import html

from kbert_gui.fine_tuning.eta_estimator import format_duration
from kbert_gui.fine_tuning.table_problems import MAX_PROBLEMS
from kbert_gui.services.score_words import metric_name
from kbert_gui.services.score_words import score_text
from kbert_gui.widgets.probability_text import probability_text

# The data page's summary while no training file is chosen.
NO_TRAINING_FILE = "Open a training file to see its first rows here."
# What a preview summary says of a file the reader rejects.
REJECTED = "the reader rejects the file (see the message above)"
# The loss curve's name: Keras reports, at every step, the mean loss of the epoch so far
# (it steps at each epoch's start), not the loss of that batch.
TRAINING_LOSS = "training loss (running mean of the epoch)"
# What Esc asks during a run, and closing the window (Ctrl+Q, File > Quit): title, text.
STOP_QUESTION = (
    "Stop training?",
    "Stop the run after the current batch? It writes a checkpoint, and Resume continues "
    "from it.",
)
CLOSE_QUESTION = (
    "Training is running",
    "A run is in progress. Close anyway? It stops after the current batch and writes a "
    "checkpoint; after a restart, choose its run folder and Resume continues it with its "
    "curves and log.",
)
_HEADINGS = {"completed": "Completed", "stopped_early": "Stopped early"}
def switch_model_question(source, current):
    """What "Use its setup" asks before it makes the run's model `source` the app's
    (`current` is the app's now): title, text. Rich text with the names escaped, so a
    name that looks like markup shows as written: it comes from a run folder, which
    may come from anyone."""
    return (
        "Switch to the run's model?",
        f"<p>This run started from the model <b>{html.escape(str(source))}</b>; the app "
        f"works with <b>{html.escape(str(current))}</b>.</p>"
        "<p>Switch the app to the run's model? Only do so for a model you trust: a name "
        "such as hf://… is downloaded from the web. No keeps the current model and takes "
        "the rest of the run's setup.</p>",
    )


def describe_prediction(result):
    """One line for a probe's prediction (`Classification`, entity spans,
    `AnswerResult`, `FillMaskResult` or `Choice`)."""
    if hasattr(result, "endings"):
        ranked = sorted(
            enumerate(zip(result.endings, result.probabilities)), key=lambda item: -item[1][1]
        )[:3]
        return " · ".join(
            f"{index}: “{ending}” {probability:.0%}" for index, (ending, probability) in ranked
        )
    if hasattr(result, "probabilities"):
        ranked = sorted(result.probabilities.items(), key=lambda item: -item[1])[:3]
        return " · ".join(
            f"{label} {probability_text(probability)}" for label, probability in ranked
        )
    if hasattr(result, "answers"):
        if result.is_impossible or not result.answers:
            return "(no answer)"
        return " · ".join(
            f"“{answer.text}” {probability_text(answer.probability)}"
            for answer in result.answers
        )
    if hasattr(result, "masks"):
        return "; ".join(
            "[MASK] → "
            + ", ".join(
                f"{candidate.token} {probability_text(candidate.probability)}"
                for candidate in mask.candidates[:3]
            )
            for mask in result.masks
        )
    if isinstance(result, list):
        if not result:
            return "(no entities)"
        return ", ".join(
            f"{span.text} [{span.label} {probability_text(span.score)}]" for span in result
        )
    return str(result)


def curve_names(task_name):
    """`TrainingCurveChart.set_names` arguments for a run of `task_name`: masked-LM
    pretraining plots its running accuracy at every step, the other tasks their
    evaluation metric at each epoch end."""
    if task_name == "masked-lm":
        return TRAINING_LOSS, "MLM accuracy (running)", False
    return TRAINING_LOSS, "evaluation metric", True


def probe_line(epoch, result, error):
    """`(line, tooltip)` of the probe list for a prediction after `epoch` (None: of the
    saved model), or for the `error` that made it fail."""
    where = f"Epoch {epoch}" if epoch is not None else "Saved model"
    text = error if error else describe_prediction(result)
    return f"{where}: {text}", f"{where}\n{text}"


def log_line(message, level):
    """A log record as the log page shows it: INFO plain, other levels named."""
    return message if level == "INFO" else f"{level}: {message}"


def start_line(task_label, output, resume):
    """The log line that opens a run of the task labelled `task_label` in `output`."""
    return f"— {'Resuming' if resume else 'Starting'} {task_label.lower()} in {output}"


def earlier_run_line(task_label, steps):
    """What the status line says of a run folder's run from an earlier session."""
    done = f"stopped after step {steps}" if steps else "stopped before its first step"
    return f"The run in this folder ({task_label.lower()}) {done}. Resume continues it."


# The ETA beside the progress bar until a run's (or a search trial's) own steps give one.
ETA_ESTIMATING = "ETA: estimating…"


def steps_text(step, total):
    """The progress bar's text: "1,250 / 3,200 steps" (Qt's "%v" has no separators)."""
    return f"{step:,} / {total:,} steps"


def eta_text(seconds_left, seconds_per_step):
    """The ETA beside the progress bar: "ETA 1:05 · 500 ms/step"."""
    return f"ETA {format_duration(seconds_left)} · {seconds_per_step * 1000:.0f} ms/step"


def epoch_line(epoch, logs, in_percent=False):
    """The log line of an epoch end: its losses and scores (`logs`' floats), named and
    written as everywhere in the tab (`score_text`)."""
    scores = ", ".join(
        f"{metric_name(key)} {score_text(key, number, in_percent)}"
        for key, number in logs.items()
        if key != "epoch" and isinstance(number, float)
    )
    return f"Epoch {epoch}: {scores}"


def result_table(result):
    """`(rows, best_row, best_reason)` for the evaluation table of a finished run.

    A fine-tuning result (it has a `history`) lists its epochs with the saved one as
    the best row; a pretraining result lists its training and evaluation metrics.
    """
    if hasattr(result, "history"):
        rows = [dict(entry) for entry in result.history]
        best = next(
            (index for index, row in enumerate(rows) if row.get("epoch") == result.best_epoch),
            None,
        )
        reason = (
            f"Best {metric_name(result.metric)}: this epoch's model was saved."
            if result.metric
            else "Last epoch: saved."
        )
        return rows, best, reason
    rows = [{"data": "training", **result.train_metrics}]
    if result.eval_metrics:
        rows.append({"data": "evaluation", **result.eval_metrics})
    return rows, None, ""


def result_summary(result, in_percent=False):
    """What a finished run achieved, after its heading on the status line."""
    if not hasattr(result, "history"):
        return f"{result.global_step} steps"
    if result.metric:
        best = score_text(result.metric, result.best_metric, in_percent)
        return f"best {metric_name(result.metric)} {best} at epoch {result.best_epoch}"
    return f"{len(result.history)} epochs (no evaluation data: the last epoch is saved)"


def status_heading(status):
    """"Completed", "Stopped early", or the status itself."""
    return _HEADINGS.get(status, status)


def cancelled_line(global_step):
    """"Cancelled after step N" (just "Cancelled" before the first step)."""
    where = f" after step {global_step}" if global_step else ""
    return f"Cancelled{where}"


def preview_summary(train, evaluation):
    """The data page's summary of the training (and evaluation) preview."""
    summary = f"Training: {train.summary or _rejected(train)}"
    if evaluation is not None:
        summary += f"\nEvaluation: {evaluation.summary or _rejected(evaluation)}"
    return summary


def _rejected(preview):
    count = len(preview.problems)
    if count < 2:
        return REJECTED
    listed = f"the first {count}" if count >= MAX_PROBLEMS else f"all {count}"
    return f"the reader rejects the file: {listed} problems are listed above"


def preview_problems(train, evaluation):
    """The readers' messages about the previewed files, training first, each problem of
    each file in the order of the file, each distinct message once."""
    messages = [
        message
        for preview in (train, evaluation)
        if preview is not None
        for _, message in preview.problems
    ]
    # One problem of both files (no label column chosen) is said once.
    return list(dict.fromkeys(messages))


def error_lines(preview):
    """`{line: message}` of the preview's rejected lines, for `DataPreviewModel`."""
    return {line: message for line, message in preview.problems if line is not None}


def probe_suggestion(preview, mapping):
    """The probe fields (`ProbeInput.suggest`'s arguments) that the preview's first
    example fills, or None where the preview shows no examples.

    Args:
        preview: the training file's `TrainingDataPreview`.
        mapping: the column form's mapping (tables only; None while unknown).
    """
    if not preview.rows or (
        preview.error and (preview.kind != "table" or preview.error_line == preview.lines[0])
    ):
        # Rejected files show raw lines, not examples.
        return None
    first = preview.rows[0]
    if preview.kind == "table":
        mapping = mapping or {}
        positions = {}
        for field in ("text_column", "pair_column"):
            column = mapping.get(field)
            if isinstance(column, int):
                positions[field] = column
            elif column in preview.headers:
                positions[field] = preview.headers.index(column)
        return {
            "text": first[positions["text_column"]] if "text_column" in positions else None,
            "pair": first[positions["pair_column"]] if "pair_column" in positions else None,
        }
    if preview.kind == "conll":
        return {"text": first[0]}
    if preview.kind == "squad":
        return {"question": first[1], "context": first[3]}
    if preview.kind == "choices":
        return {"context": first[0], "endings": list(first[1:-1])}
    if preview.kind == "text":
        words = next((row[0].split() for row in preview.rows if len(row[0].split()) >= 3), None)
        if words:
            words[len(words) // 2] = "[MASK]"
            return {"text": " ".join(words)}
    return None
