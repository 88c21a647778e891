"""The runs of a folder, one row each: task, model, data, settings, best score, time, status."""

import pathlib

from PySide6.QtCore import Qt

from kbert_gui.services.model_description import short_name
from kbert_gui.services.score_words import metric_name
from kbert_gui.services.score_words import score_text
from kbert_gui.services.score_words import scores_in_percent
from kbert_gui.widgets.row_table_model import RowTableModel

COLUMNS = ("Run", "Task", "Model", "Data", "Settings", "Best score", "Time", "Status")


class RunsTableModel(RowTableModel):
    """`RunSummary`s as rows; `run(row)` gives a row's summary back.

    A cell shows its fact in short (the data file's name, the model's `short_name`, the
    score as the fine-tuning tab writes it, with where it was reached); its tooltip
    shows it in full, and a run whose files were not all read says why.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._columns = COLUMNS

    def set_runs(self, runs):
        self.beginResetModel()
        self._rows = tuple(runs)
        self.endResetModel()

    def run(self, row):
        return self._rows[row]

    def runs(self):
        return list(self._rows)

    def cell_data(self, row, column, role):
        run = self._rows[row]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell_text(run, COLUMNS[column])
        if role == Qt.ItemDataRole.ToolTipRole:
            full = cell_tooltip(run, COLUMNS[column])
            return f"{full}\n{run.problem}".strip() if run.problem else full
        return None


def cell_text(run, column):
    """What the cell of `run` in `column` shows."""
    if column == "Run":
        return run.name
    if column == "Task":
        return run.task or "–"
    if column == "Model":
        return short_name(run.source) if run.source else "–"
    if column == "Data":
        return pathlib.Path(run.train).name if run.train else "–"
    if column == "Settings":
        return run.settings_text or "–"
    if column == "Best score":
        return best_score_text(run)
    if column == "Time":
        return run.when if run.modified else "–"
    return run.status


def cell_tooltip(run, column):
    if column == "Run":
        return str(run.folder)
    if column == "Model":
        return run.source or None
    if column == "Data":
        return run.train or None
    return cell_text(run, column)


def best_score_text(run):
    """"accuracy 87.5 % (epoch 2)", or "–"."""
    if run.best_score is None or not run.metric:
        return "–"
    score = score_text(run.metric, float(run.best_score), scores_in_percent(run.task))
    where = f" ({run.best_at})" if run.best_at else ""
    return f"{metric_name(run.metric)} {score}{where}"
