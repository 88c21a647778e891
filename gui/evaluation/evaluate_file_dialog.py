"""File > Evaluate…: which model to score, on which labelled file, for which task."""

from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QDialog
from PySide6.QtWidgets import QDialogButtonBox
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QWidget

from kbert.finetuning.task_specs import TASK_SPECS
from kbert_gui.services.evaluation_request import EvaluationRequest

# The tasks whose files hold labelled examples (continued pretraining has none).
EVALUATED_TASKS = tuple(spec for spec in TASK_SPECS.values() if not spec.runs_pretraining)


class EvaluateFileDialog(QDialog):
    """Asks for a model folder, a labelled file and the task; `request()` says what was chosen.

    Table files are read with the task's default columns (`text`, `pair`, `label`).

    Args:
        file_dialogs: the app's `FileDialogs`.
        model_source: the model to propose (the app's current one).
        parent: the parent widget.
    """

    def __init__(self, file_dialogs, model_source="", parent=None):
        super().__init__(parent)
        self.setWindowTitle("Evaluate a model")
        self._file_dialogs = file_dialogs
        self.task_box = QComboBox()
        for spec in EVALUATED_TASKS:
            self.task_box.addItem(spec.title, spec.name)
            self.task_box.setItemData(self.task_box.count() - 1, spec.description, 3)
        self.model_edit = QLineEdit(model_source)
        self.model_edit.setPlaceholderText("a fine-tuned model folder")
        self.data_edit = QLineEdit()
        self.data_edit.setPlaceholderText("a labelled file in the task's format")
        self.other_edit = QLineEdit()
        self.other_edit.setObjectName("compareWith")
        self.other_edit.setPlaceholderText("optional: a second classifier, to compare")
        self.other_edit.setToolTip(
            "Evaluate a second classifier on the same file: the browser shows both "
            "predictions per row and can list where they disagree"
        )
        form = QFormLayout(self)
        form.addRow("Task:", self.task_box)
        form.addRow("Model:", self._with_browse(self.model_edit, self._choose_model))
        form.addRow("Labelled file:", self._with_browse(self.data_edit, self._choose_data))
        form.addRow("Compare with:", self._with_browse(self.other_edit, self._choose_other))
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Evaluate")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.model_edit.textChanged.connect(self._update_ok)
        self.data_edit.textChanged.connect(self._update_ok)
        self._update_ok()
        self.resize(560, self.sizeHint().height())

    def _with_browse(self, edit, choose):
        button = QPushButton("Browse…")
        button.clicked.connect(choose)
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(edit, 1)
        layout.addWidget(button)
        return row

    def _choose_model(self):
        chosen = self._file_dialogs.existing_folder(self, "Model folder", "models")
        if chosen:
            self.model_edit.setText(chosen)

    def _choose_other(self):
        chosen = self._file_dialogs.existing_folder(self, "Second model folder", "models")
        if chosen:
            self.other_edit.setText(chosen)

    def other_source(self):
        """The second model to compare with, or "" for none."""
        return self.other_edit.text().strip()

    def _choose_data(self):
        spec = TASK_SPECS[self.task()]
        patterns = " ".join(f"*.{suffix}" for suffix in spec.file_types)
        chosen = self._file_dialogs.open_file(
            self, "Labelled file", f"{spec.title} files ({patterns});;All files (*)", "data"
        )
        if chosen:
            self.data_edit.setText(chosen)

    def _update_ok(self):
        ready = bool(self.model_edit.text().strip() and self.data_edit.text().strip())
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ready)

    def task(self):
        return self.task_box.currentData()

    def set_task(self, name):
        self.task_box.setCurrentIndex(self.task_box.findData(name))

    def request(self):
        """The `EvaluationRequest` the fields describe."""
        return EvaluationRequest(
            self.model_edit.text().strip(), self.task(), self.data_edit.text().strip()
        )
