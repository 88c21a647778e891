"""An axis's round ticks and their labels, for the app's painted charts."""

import math


def value_range(values, zero_based):
    """`(low, high)` for an axis showing `values` (a unit interval when they fit in it)."""
    if not values:
        return (0.0, 1.0)
    low, high = min(values), max(values)
    if not zero_based and 0.0 <= low and high <= 1.0:
        return (0.0, 1.0)
    if not zero_based and 0.0 <= low and high <= 100.0 and high > 1.0:
        return (0.0, 100.0)
    if zero_based and low >= 0:
        low = 0.0
    if high - low < 1e-9:
        high = low + 1.0
    return (low, high + (high - low) * 0.05)


def nice_ticks(low, high, integer=False, count=5):
    """Round tick values covering `[low, high]`."""
    span = max(high - low, 1e-12)
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(
        multiple * magnitude for multiple in (1, 2, 2.5, 5, 10) if multiple * magnitude >= raw
    )
    if integer:
        step = max(1, round(step))
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-6:
        if value >= low - step * 1e-6:
            ticks.append(value)
        value += step
    if ticks[-1] < high - step * 1e-6:
        ticks.append(ticks[-1] + step)
    return ticks


def tick_label(value, ticks):
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = 0
    while decimals < 4 and abs(round(step, decimals) - step) > step * 1e-6:
        decimals += 1
    return f"{value:.{decimals}f}"
