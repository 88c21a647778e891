"""Whether Start fine-tunes once or runs a hyperparameter search
(`kbert.finetuning.FineTuningSearch`), and over what."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QSizePolicy
from PySide6.QtWidgets import QSpinBox
from PySide6.QtWidgets import QWidget

from kbert.finetuning.search_space import SYNTAX_HELP
from kbert.finetuning.search_space import SearchSpace
from kbert_gui.widgets import style

SINGLE_RUN, PAPER_GRID, OWN_SPACE = "single", "paper", "own"
CHOICES = {
    SINGLE_RUN: "Single run",
    PAPER_GRID: "The paper's grid",
    OWN_SPACE: "My own grid or ranges",
}
DEFAULT_TRIALS = 20


class SearchForm(QWidget):
    """A "Search" choice: a single run, BERT's grid (Appendix A.3), or a grid or ranges
    typed as for `kbert finetune --search`, checked with `SearchSpace.parse` as typed
    (its message shows under the text). "Restarts" (seeds per grid point) shows for a
    grid, "Trials" (points drawn) for ranges.

    Signals:
        changed(): the choice, the text or a count changed.

    Args:
        parent: the parent widget.
    """

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.kind_box = QComboBox()
        self.kind_box.setObjectName("searchChoice")
        self.kind_box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        for kind, label in CHOICES.items():
            self.kind_box.addItem(label, kind)
        self.kind_box.setToolTip(
            "A single run with the settings above, or one run per point of a grid (or per "
            "point drawn from ranges), ranked on the evaluation data; the best is kept."
        )
        self.space_edit = QLineEdit()
        self.space_edit.setObjectName("searchSpace")
        self.space_edit.setPlaceholderText("learning_rate=3e-5,2e-5;batch_size=16")
        self.space_edit.setToolTip(f"<p>As for kbert finetune --search: {SYNTAX_HELP}.</p>")
        self.space_edit.setClearButtonEnabled(True)
        self.problem_label = QLabel()
        self.problem_label.setObjectName("searchProblem")
        self.problem_label.setWordWrap(True)
        self.problem_label.setStyleSheet(style.ERROR_TEXT_STYLE)
        self.restarts_box = _count_box("searchRestarts", 1, 1000, 1)
        self.restarts_box.setToolTip(
            "Runs per grid point, with seeds seed, seed + 1, …: the paper's random restarts."
        )
        self.trials_box = _count_box("searchTrials", 1, 100_000, DEFAULT_TRIALS)
        self.trials_box.setToolTip(
            "How many points to draw from the ranges (Optuna's TPE sampler, each guided by "
            "the scores of the trials before it)."
        )
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow("Search:", self.kind_box)
        form.addRow("Grid or ranges:", self.space_edit)
        form.addRow(self.problem_label)
        form.addRow("Restarts:", self.restarts_box)
        form.addRow("Trials:", self.trials_box)
        self._form = form
        self.kind_box.currentIndexChanged.connect(self._update)
        self.space_edit.textChanged.connect(self._update)
        self.restarts_box.valueChanged.connect(self.changed)
        self.trials_box.valueChanged.connect(self.changed)
        self._update()

    def kind(self):
        """`SINGLE_RUN`, `PAPER_GRID` or `OWN_SPACE`."""
        return self.kind_box.currentData()

    def _space_text(self):
        return PAPER_GRID if self.kind() == PAPER_GRID else self.space_edit.text().strip()

    def _space(self):
        """`(SearchSpace or None, problem or None)` of the form's choice."""
        if self.kind() == SINGLE_RUN:
            return None, None
        if not self._space_text():
            return None, "Type a grid or ranges, e.g. learning_rate=3e-5,2e-5;batch_size=16."
        try:
            return SearchSpace.parse(self._space_text()), None
        except (ValueError, OSError) as error:
            return None, str(error)

    def problem(self):
        """Why the search cannot start as the form says it, or None."""
        return self._space()[1]

    def search(self):
        """`{"space", "restarts", "trials"}` for `FineTuningSearch` and its
        `"total_trials"`, or None for a single run (or a search the form cannot describe
        yet: see `problem`)."""
        space, _ = self._space()
        if space is None:
            return None
        text = self._space_text()
        if space.sampled:
            trials = self.trials_box.value()
            return {"space": text, "restarts": 1, "trials": trials, "total_trials": trials}
        restarts = self.restarts_box.value()
        total = len(space.points()) * restarts
        return {"space": text, "restarts": restarts, "trials": None, "total_trials": total}

    def set_search(self, search):
        """Shows `search` (as `search()` returns it; None: a single run)."""
        if not search:
            self.kind_box.setCurrentIndex(self.kind_box.findData(SINGLE_RUN))
            return
        kind = PAPER_GRID if search["space"] == PAPER_GRID else OWN_SPACE
        if kind == OWN_SPACE:
            self.space_edit.setText(search["space"])
        self.restarts_box.setValue(search.get("restarts") or 1)
        self.trials_box.setValue(search.get("trials") or DEFAULT_TRIALS)
        self.kind_box.setCurrentIndex(self.kind_box.findData(kind))

    def _update(self):
        kind = self.kind()
        space, problem = self._space()
        typed = kind == OWN_SPACE
        self._form.setRowVisible(self.space_edit, typed)
        shown_problem = problem if typed and self.space_edit.text().strip() else None
        self.problem_label.setText(shown_problem or "")
        self._form.setRowVisible(self.problem_label, bool(shown_problem))
        sampled = space is not None and space.sampled
        self._form.setRowVisible(self.restarts_box, space is not None and not sampled)
        self._form.setRowVisible(self.trials_box, sampled)
        self.changed.emit()


def _count_box(name, minimum, maximum, value):
    box = QSpinBox()
    box.setObjectName(name)
    box.setRange(minimum, maximum)
    box.setValue(value)
    box.setMinimumWidth(120)
    return box
