"""Batches, labels and model outputs as nested dicts and tuples of leaves (arrays)."""


def map_leaves(function, structure):
    """Applies `function` to the leaves of nested dicts and tuples (lists are leaves).

    Example:

    >>> map_leaves(len, ({"start": [1, 2], "end": [3]}, [4, 5, 6]))
    ({'start': 2, 'end': 1}, 3)
    """
    if isinstance(structure, dict):
        return {key: map_leaves(function, value) for key, value in structure.items()}
    if isinstance(structure, tuple):
        return tuple(map_leaves(function, value) for value in structure)
    return function(structure)
