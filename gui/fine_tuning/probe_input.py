"""The probe of a training run: an input whose prediction refreshes at every epoch."""

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QWidget

from kbert.finetuning.task_specs import TASK_SPECS

# The inputs each task's probe needs.
PROBE_FIELDS = {name: spec.probe_fields for name, spec in TASK_SPECS.items()}
# A multiple-choice probe needs two endings at least (one is no choice).
MIN_ENDINGS = 2


class ProbeInput(QWidget):
    """The fields of a probe for the chosen task: a text, a text pair, a question and
    its context, or a context and its candidate endings, one per line (masked-LM
    probes are texts with `[MASK]`).

    `suggest(...)` fills fields the user has not typed in (the tab suggests the
    training file's first example); `probe()` returns the inputs as a dict for
    `FineTuningJob`, or None while a needed field is empty.

    Signals:
        probe_changed(): the user edited the probe.
    """

    probe_changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._task = "classification"
        self._edited = set()
        self._filling = False
        self.text_edit = QLineEdit()
        self.text_edit.setObjectName("probeText")
        self.pair_edit = QLineEdit()
        self.pair_edit.setObjectName("probePair")
        self.pair_edit.setToolTip("The second text of the pair.")
        self.question_edit = QLineEdit()
        self.question_edit.setObjectName("probeQuestion")
        self.question_edit.setToolTip("A question about the context below.")
        self.context_edit = QPlainTextEdit()
        self.context_edit.setObjectName("probeContext")
        self.context_edit.setTabChangesFocus(True)
        self.context_edit.setMaximumHeight(90)
        self.endings_edit = QPlainTextEdit()
        self.endings_edit.setObjectName("probeEndings")
        self.endings_edit.setToolTip(
            "The candidate endings of the context, one per line (at least two): the "
            "probability of each is shown after every epoch."
        )
        self.endings_edit.setPlaceholderText("One ending per line")
        self.endings_edit.setTabChangesFocus(True)
        self.endings_edit.setMaximumHeight(90)
        self._fields = {
            "text": self.text_edit,
            "pair": self.pair_edit,
            "question": self.question_edit,
            "context": self.context_edit,
            "endings": self.endings_edit,
        }
        for name, field in self._fields.items():
            signal = field.textChanged if isinstance(field, QPlainTextEdit) else field.textEdited
            signal.connect(lambda *_, name=name: self._user_edit(name))

        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow("Text:", self.text_edit)
        layout.addRow("Pair:", self.pair_edit)
        layout.addRow("Question:", self.question_edit)
        layout.addRow("Context:", self.context_edit)
        layout.addRow("Endings:", self.endings_edit)
        self._layout = layout
        self.set_task(self._task)

    def _context_help(self):
        """The context field's tooltip for the task: a passage (QA) or what the endings continue."""
        if "endings" in PROBE_FIELDS[self._task]:
            return "The context the endings below continue."
        return "The passage the answer is taken from."

    def _user_edit(self, name):
        if not self._filling:
            self._edited.add(name)
            self.probe_changed.emit()

    def set_task(self, task_name):
        """Shows the fields of `task_name`'s probe."""
        self._task = task_name
        wanted = PROBE_FIELDS[task_name]
        for name, field in self._fields.items():
            self._layout.setRowVisible(field, name in wanted)
        self.context_edit.setToolTip(self._context_help())
        if task_name == "masked-lm":
            self.text_edit.setPlaceholderText(
                "A sentence with [MASK], e.g. the cat sat on the [MASK]."
            )
            self.text_edit.setToolTip(
                "A text with one or more [MASK]: the top words are shown after training."
            )
        else:
            self.text_edit.setPlaceholderText("A text to classify at every epoch end")
            self.text_edit.setToolTip(
                "The model's prediction for this text is shown at every epoch end."
            )

    def suggest(self, **values):
        """Fills the named fields ("text", "pair", "question", "context", "endings": a
        list of strings) the user has not edited."""
        self._filling = True
        try:
            for name, value in values.items():
                if name in self._edited or value is None:
                    continue
                field = self._fields[name]
                if name == "endings":
                    field.setPlainText("\n".join(value))
                elif isinstance(field, QPlainTextEdit):
                    field.setPlainText(value)
                else:
                    field.setText(value)
                    field.setCursorPosition(0)
        finally:
            self._filling = False

    def set_values(self, **values):
        """Sets fields as if the user typed them (also fields typed in before)."""
        self._edited.difference_update(values)
        self.suggest(**values)
        self._edited.update(values)
        self.probe_changed.emit()

    def probe(self):
        """`{field: text}` for the current task ("endings": the list of non-blank
        lines), or None while a field is empty or there are fewer than two endings."""
        values = {}
        for name in PROBE_FIELDS[self._task]:
            field = self._fields[name]
            text = field.toPlainText() if isinstance(field, QPlainTextEdit) else field.text()
            if name == "endings":
                endings = [line.strip() for line in text.splitlines() if line.strip()]
                if len(endings) < MIN_ENDINGS:
                    return None
                values[name] = endings
            elif not text.strip():
                return None
            else:
                values[name] = text
        return values
