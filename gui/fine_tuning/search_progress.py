"""What the fine-tuning tab shows of a search: its trials table, which trial runs, how
it ended."""

import logging
import pathlib

from kbert.finetuning.search_folder import TABLE_JSON as TRIALS_JSON
from kbert_gui.fine_tuning.fine_tuning_format import curve_names
from kbert_gui.services.score_words import metric_name
from kbert_gui.services.score_words import score_text
from kbert_gui.services.score_words import scores_in_percent

logger = logging.getLogger("gui")



class SearchProgress:
    """The search part of a `FineTuningRunView`, on a `FineTuningPanel`'s "Search
    trials" group (`trials_model`, a `SearchTrialsModel`, and `trials_summary`).

    `begin` shows the group for a search (hides it for a single run) with the trials an
    earlier session finished in the folder; each trial that starts clears the curves
    and the evaluation rows for its own, each that ends adds its row; `show_result`
    shows the `SearchResult`.

    Args:
        panel: the `FineTuningPanel`.
    """

    def __init__(self, panel):
        self.panel = panel
        self.search = None
        self._task = None

    @property
    def active(self):
        """Whether the run shown is a search."""
        return self.search is not None

    def begin(self, search, metric, task, output):
        """A run begins: a search (`SearchForm.search`), or a single run (None)."""
        self.search, self._task = search, task
        panel = self.panel
        panel.trials_group.setVisible(search is not None)
        if search is None:
            return
        panel.trials_model.start(metric, scores_in_percent(task))
        panel.trials_model.set_rows(_earlier_trials(output))
        self._show_summary()

    def _finished(self):
        return self.panel.trials_model.rowCount()

    def _total(self):
        return self.search["total_trials"]

    def _show_summary(self, ended=""):
        model = self.panel.trials_model
        text = ended or f"{self._finished()} of {self._total()} trials finished."
        best = model.best_row
        if best is not None:
            row = model.records()[best]
            best_text = "Best" if ended else "Best so far"
            text += f" {best_text}: trial {row['trial'] + 1}, {self._score(row)}."
        self.panel.trials_summary.setText(text)

    def trial_started(self):
        """A trial starts: the curves and evaluation rows are its own. Returns the rows."""
        chart = self.panel.chart
        chart.clear()
        chart.set_names(*curve_names(self._task))
        self.panel.probe_list.clear()
        return []

    def trial_finished(self, row):
        """A trial ended with `row`: the table takes it. Returns the log line."""
        model = self.panel.trials_model
        model.add_row(row)
        self._show_summary()
        return f"— Trial {row['trial'] + 1} of {self._total()} finished: {self._score(row)}"

    def _score(self, row):
        """A trial row's score in words: "exact match 66.7 %"."""
        model = self.panel.trials_model
        shown = score_text(model.metric, row.get(model.metric), model.in_percent)
        return f"{metric_name(model.metric)} {shown}"

    def status(self, text):
        """`text` for the status line, naming the trial in progress during a search."""
        if not self.active:
            return text
        return f"Trial {min(self._finished() + 1, self._total())} of {self._total()}: {text}"

    def show_result(self, result):
        """The search ended on its own; `(heading, summary)` for the status line."""
        model = self.panel.trials_model
        model.set_rows(result.trials)
        finished = f"{len(result.trials)} of {result.total_trials} trials finished"
        if result.status == "completed" and result.best is not None:
            best = result.best
            summary = (
                f"best {self._score(best)} (trial {best['trial'] + 1} "
                f"of {result.total_trials}), its model kept"
            )
            heading = "Search completed"
        else:
            summary = f"{finished}; other processes run the rest"
            heading = "Search incomplete"
        self._show_summary(f"{heading}: {finished}.")
        return heading, summary

    def cancelled_line(self):
        """"Search cancelled: N of M trials finished"."""
        return f"Search cancelled: {self._finished()} of {self._total()} trials finished"


def _earlier_trials(output):
    """The trials a search finished in `output` before (its table), or []."""
    from kbert.files.bounded_reader import read_json

    path = pathlib.Path(output).expanduser() / TRIALS_JSON
    if not path.is_file():
        return []
    try:
        rows = read_json(path, "data").get("trials", [])
    except (OSError, ValueError, AttributeError) as error:
        logger.warning("Ignoring the search table %s: %s", path, error)
        return []
    return [row for row in rows if isinstance(row, dict) and "trial" in row]
