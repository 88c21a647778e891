"""A fine-tuning run's progress over its epochs: the best epoch so far and early stopping."""


def fresh_state():
    """The state of a run that has not trained yet (a checkpoint stores it as it goes)."""
    return dict(
        epoch=0,
        batch=0,
        global_step=0,
        best_metric=None,
        best_epoch=None,
        epochs_without_improvement=0,
        stopped_early=False,
        history=[],
    )


def record_epoch(state, logs, score, patience):
    """Records an epoch's `logs` in `state`; whether its model is the best so far.

    Args:
        state: the run's state (`fresh_state()`, or a checkpoint's), updated here.
        logs: the epoch's logs, with its number under "epoch".
        score: the epoch's task metric on the evaluation data; None without
            evaluation data, when every epoch is the best so far (the latest is kept).
        patience: epochs without a better score before the run stops early
            (`state["stopped_early"]`); None never stops early.

    Example:

    >>> state = fresh_state()
    >>> record_epoch(state, {"epoch": 1, "accuracy": 0.8}, 0.8, patience=1)
    True
    >>> record_epoch(state, {"epoch": 2, "accuracy": 0.7}, 0.7, patience=1)
    False
    >>> state["best_epoch"], state["stopped_early"]
    (1, True)
    """
    state["history"].append(logs)
    state["epoch"] = logs["epoch"]
    state["batch"] = 0
    state["running_logs"] = {}
    best = score is None or state["best_metric"] is None or score > state["best_metric"]
    if best:
        state["best_metric"] = score
        state["best_epoch"] = logs["epoch"]
        state["epochs_without_improvement"] = 0
    else:
        state["epochs_without_improvement"] += 1
    state["stopped_early"] = (
        patience is not None and state["epochs_without_improvement"] >= patience
    )
    return best
