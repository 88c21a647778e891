"""Wall-clock timing helpers shared by the benchmark scripts.

Every figure is a median over repeated calls after warm-up calls that are not timed
(the first call of a compiled function includes its compilation).
"""

import statistics
import time


def _check_count(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}. Received: {name}={value!r}")


def time_repeatedly(function, repeats, warmup=1):
    """Seconds of each of `repeats` calls of `function()`, after `warmup` untimed calls.

    `function` must not return before its work is done: a call that only queues work
    on an accelerator has to wait for it (e.g. fetch a result to the host) itself.
    """
    _check_count("repeats", repeats, 1)
    _check_count("warmup", warmup, 0)
    for _ in range(warmup):
        function()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        seconds.append(time.perf_counter() - start)
    return seconds


def interleaved_timings(functions, rounds, warmup=1):
    """Times several functions in alternation, so that a change in the machine's load
    (another process, the CPU clock) affects them all alike.

    Args:
        functions: dict `name -> function()`.
        rounds: timed rounds; each round calls every function once, in the dict's order.
        warmup: untimed rounds first.

    Returns:
        Dict `name -> list of seconds`, one per round.

    Example:

    >>> seconds = interleaved_timings({"a": fast, "b": slow}, rounds=30)
    >>> summarize(seconds["a"])["median"] < summarize(seconds["b"])["median"]
    True
    """
    if not functions:
        raise ValueError("`functions` must name at least one function. Received: {}")
    _check_count("rounds", rounds, 1)
    _check_count("warmup", warmup, 0)
    for _ in range(warmup):
        for function in functions.values():
            function()
    seconds = {name: [] for name in functions}
    for _ in range(rounds):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            seconds[name].append(time.perf_counter() - start)
    return seconds


def percentile(values, fraction):
    """The `fraction` quantile (0..1) of `values`, interpolated linearly between ranks."""
    if not values:
        raise ValueError("`values` must not be empty. Received: []")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"`fraction` must be in [0, 1]. Received: fraction={fraction!r}")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    lower = int(position)
    upper = min(lower + 1, len(ordered) - 1)
    return ordered[lower] + (ordered[upper] - ordered[lower]) * (position - lower)


def summarize(seconds):
    """`{"median", "p90", "min", "runs"}` of a list of seconds."""
    return {
        "median": statistics.median(seconds),
        "p90": percentile(seconds, 0.9),
        "min": min(seconds),
        "runs": len(seconds),
    }


def report(result, table, output=None):
    """Prints a benchmark's `table`; with `output`, writes its `result` there as JSON."""
    import json

    print(table)
    if output:
        with open(output, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=2)
