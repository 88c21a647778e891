"""File ▸ Open model… (Ctrl+O): a model by name, folder or file, or from the list."""

from PySide6.QtCore import Qt
from PySide6.QtCore import Signal
from PySide6.QtCore import Slot
from PySide6.QtWidgets import QCompleter
from PySide6.QtWidgets import QDialog
from PySide6.QtWidgets import QDialogButtonBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QListWidget
from PySide6.QtWidgets import QListWidgetItem
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QVBoxLayout

from kbert.checkpoints.named_checkpoints import NAMED_CHECKPOINTS
from kbert.model_table import MODEL_CLASSES
from kbert.presets.preset_registry import BUILTIN_PRESETS
from kbert.presets.preset_registry import builtin_class_name
from kbert_gui.widgets import style
from kbert_gui.window.model_source_problem import model_names
from kbert_gui.window.model_source_problem import model_source_problem

NAME_HINT = (
    "A built-in name (demo), a published checkpoint (bert-base-uncased, downloaded and "
    "converted once), hf://owner/name, kaggle://owner/model/framework/variation, or a "
    "preset, checkpoint or .keras path."
)
SOURCE_ROLE = Qt.ItemDataRole.UserRole


class OpenModelDialog(QDialog):
    """One place to open any model the command line takes.

    The name field takes every form of `kbert.presets.resolve_preset` (it completes
    built-in, published and recent names); "Folder…" and "File…" choose a preset or
    checkpoint folder or a `.keras` file and open it at once; the list holds the recent
    models, then the built-in and the published ones with what they are (a click puts
    one in the field, a double click or Enter opens it). What cannot name a model (an
    unknown name, a path that is not there) gets one line in the dialog, which stays
    open; what can is handed on through `chosen`, and the window's `ModelOpener` checks
    it in a worker.

    Signals:
        chosen(str): the model source to open.

    Args:
        file_dialogs: the app's `FileDialogs` (each kind of file starts where the last
            one was chosen).
        recent: the recent model sources, newest first.
        parent: the parent widget.
    """

    chosen = Signal(str)

    def __init__(self, file_dialogs, recent, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Open model")
        self.file_dialogs = file_dialogs
        self.name_edit = QLineEdit()
        self.name_edit.setObjectName("modelNameEdit")
        self.name_edit.setPlaceholderText("demo, bert-base-uncased, hf://…, a path")
        self.name_edit.setToolTip(NAME_HINT)
        completer = QCompleter(list(dict.fromkeys([*recent, *model_names()])), self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.name_edit.setCompleter(completer)
        self.folder_button = QPushButton("Folder…")
        self.folder_button.setToolTip(
            "A kbert preset, or a Hugging Face, Google or keras-hub checkpoint folder."
        )
        self.file_button = QPushButton("File…")
        self.file_button.setToolTip("A .keras file written by model.save.")
        self.hint_label = QLabel(NAME_HINT)
        self.hint_label.setWordWrap(True)
        self.hint_label.setStyleSheet(style.HINT_STYLE)
        self.problem_label = QLabel()
        self.problem_label.setObjectName("openModelProblem")
        self.problem_label.setWordWrap(True)
        self.problem_label.setStyleSheet(style.ERROR_TEXT_STYLE)
        self.problem_label.hide()
        self.model_list = QListWidget()
        self.model_list.setObjectName("modelList")
        # Long descriptions end in "…" (the tooltip has the source); no sideways scrolling.
        self.model_list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.model_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        _fill_model_list(self.model_list, recent)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        self._lay_out()
        self.name_edit.textEdited.connect(self._clear_problem)
        self.folder_button.clicked.connect(self._choose_folder)
        self.file_button.clicked.connect(self._choose_file)
        self.model_list.currentItemChanged.connect(self._item_chosen)
        self.model_list.itemActivated.connect(lambda item: self.open_source())
        self.buttons.accepted.connect(self.open_source)
        self.buttons.rejected.connect(self.reject)
        self.resize(640, 440)

    def _lay_out(self):
        name_row = QHBoxLayout()
        name_row.addWidget(QLabel("Model:"))
        name_row.addWidget(self.name_edit, 1)
        name_row.addWidget(self.folder_button)
        name_row.addWidget(self.file_button)
        layout = QVBoxLayout(self)
        layout.addLayout(name_row)
        layout.addWidget(self.hint_label)
        layout.addWidget(self.problem_label)
        layout.addWidget(self.model_list, 1)
        layout.addWidget(self.buttons)

    @property
    def problem(self):
        """The line shown about what the field names, or "" while none is shown."""
        return self.problem_label.text() if not self.problem_label.isHidden() else ""

    @Slot()
    def open_source(self):
        """Opens what the field names, or says in one line why it names no model."""
        text = self.name_edit.text().strip()
        problem = model_source_problem(text)
        if problem:
            self.problem_label.setText(problem)
            self.problem_label.show()
            self.name_edit.setFocus()
            return
        self.chosen.emit(text)
        self.accept()

    @Slot()
    def _clear_problem(self):
        self.problem_label.clear()
        self.problem_label.hide()

    @Slot()
    def _choose_folder(self):
        folder = self.file_dialogs.existing_folder(
            self, "Open a preset or checkpoint folder", "models"
        )
        self._open_path(folder)

    @Slot()
    def _choose_file(self):
        path = self.file_dialogs.open_file(
            self, "Open a .keras model file", "Keras models (*.keras)", "models"
        )
        self._open_path(path)

    def _open_path(self, path):
        if path:
            self.name_edit.setText(str(path))
            self._clear_problem()
            self.open_source()

    @Slot(object, object)
    def _item_chosen(self, item, previous):
        source = item.data(SOURCE_ROLE) if item is not None else None
        if source:
            self.name_edit.setText(source)
            self._clear_problem()


def _fill_model_list(model_list, recent):
    """Recent models, newest first, then the built-in and the published ones not among
    them, under headings."""
    builtin = [name for name in sorted(BUILTIN_PRESETS) if name not in recent]
    published = [name for name in NAMED_CHECKPOINTS if name not in recent]
    sections = (
        ("Recent", recent),
        ("Built-in", builtin),
        ("Published (downloaded and converted once)", published),
    )
    for heading, sources in sections:
        if not sources:
            continue
        title = QListWidgetItem(heading)
        title.setFlags(Qt.ItemFlag.NoItemFlags)
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        model_list.addItem(title)
        for source in sources:
            item = QListWidgetItem(_item_text(source))
            item.setData(SOURCE_ROLE, source)
            item.setToolTip(source)
            model_list.addItem(item)


def _item_text(source):
    """A list entry: the source, and for a named model what it is ("demo-spam —
    classifier", "bert-base-uncased — 12 layers, 768 wide, English, uncased")."""
    if source in NAMED_CHECKPOINTS:
        return f"{source} — {NAMED_CHECKPOINTS[source].description}"
    if source not in BUILTIN_PRESETS:
        return source
    row = MODEL_CLASSES.get(builtin_class_name(source))
    return f"{source} — {row.app_kind}" if row is not None and row.app_kind else source
