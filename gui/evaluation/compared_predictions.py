"""Two classifiers' evaluations of one file as one: each row with both predictions."""

import dataclasses

# The columns a comparison adds after a row's own prediction.
OTHER_COLUMNS = ("other_predicted", "other_probability", "agree")
# What the second model's scores are named by: "other_accuracy".
OTHER_PREFIX = "other_"


def compare_predictions(first, second):
    """`first`'s `EvaluationPredictions` with `second`'s prediction and probability on
    every row and whether the two agree (`agree`); the scores are both models', the
    second's prefixed `OTHER_PREFIX` (the same file, read the same way, so rows pair up)."""
    if first.task != second.task or len(first.rows) != len(second.rows):
        raise ValueError(
            "Two models compare on one file: got "
            f"{len(first.rows):,} {first.task} rows and {len(second.rows):,} {second.task} rows."
        )
    rows = tuple(
        dict(
            row,
            other_predicted=other["predicted"],
            other_probability=other["probability"],
            agree=row["predicted"] == other["predicted"],
        )
        for row, other in zip(first.rows, second.rows)
    )
    columns = _after(first.columns, "correct", OTHER_COLUMNS)
    scores = dict(first.scores)
    scores.update({f"{OTHER_PREFIX}{name}": value for name, value in second.scores.items()})
    return dataclasses.replace(first, columns=columns, rows=rows, scores=scores)


def disagreements(predictions):
    """A boolean list over the rows: where the two models predict differently."""
    return [not row["agree"] for row in predictions.rows]


def _after(columns, key, added):
    columns = tuple(columns)
    place = columns.index(key) + 1 if key in columns else len(columns)
    return columns[:place] + tuple(added) + columns[place:]
