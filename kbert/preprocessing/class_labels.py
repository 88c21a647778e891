"""The label names a Hugging Face `datasets.Dataset` declares for a label column.

A `ClassLabel` feature stores class ids and keeps their names (`feature.names`); a
per-token label column is a sequence of one (`feature.feature.names`, as CoNLL-2003's
`ner_tags`). kbert reads the names, so that a model trained on the ids says "spam",
not "1". `datasets` itself is not imported: only those attributes are read.
"""


def class_label_names(dataset, column):
    """The names of the `ClassLabel` (or sequence of `ClassLabel`) `column`, else None."""
    features = getattr(dataset, "features", None)
    if column is None or not hasattr(features, "get"):
        return None
    feature = features.get(column)
    for candidate in (feature, getattr(feature, "feature", None)):
        names = getattr(candidate, "names", None)
        if isinstance(names, (list, tuple)) and names:
            return [str(name) for name in names]
    return None


def named_labels(labels, names):
    """`labels` (class ids, or lists of them per token) with each id replaced by its name.

    An id outside the names (`ClassLabel` writes -1 for a missing label) stays as it
    is, for the label checks to name.
    """
    return [
        [_named(label, names) for label in value] if isinstance(value, (list, tuple))
        else _named(value, names)
        for value in labels
    ]


def _named(label, names):
    if isinstance(label, int) and not isinstance(label, bool) and 0 <= label < len(names):
        return names[label]
    return label
