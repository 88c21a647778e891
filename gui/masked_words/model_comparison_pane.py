"""A second model's predictions for the "Masked words" text, side by side with the first."""

from PySide6.QtCore import Signal
from PySide6.QtCore import Slot
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QMenu
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QToolButton
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.masked_words.fill_mask_outcome import FillMaskOutcome
from kbert_gui.services.latest_request_runner import TYPING_DELAY_MS
from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.masked_words.mask_predictions_view import MaskPredictionsView
from kbert_gui.masked_words.masked_text_edit import MASK_TOKEN
from kbert_gui.masked_words.masked_text_edit import NO_MASK_HINT
from kbert_gui.masked_words.masked_words_format import display_name

IDLE_HINT = (
    "Compare with a second model (for example the demo model against one you "
    "fine-tuned): type a preset name or pick a folder above, then press Compare."
)


class ModelComparisonPane(QWidget):
    """Picks a second model and shows its predictions for the tab's text.

    The model is a preset name or folder typed in the line edit, chosen with the
    folder button, or taken from the recent models; "Compare" (or Enter) starts
    comparing, "Stop" ends it. `request(text, top_k, targets)` predicts with the
    second model, debounced like the first, on the same serial inference pool.

    Signals:
        prediction_chosen(str, int, int, str): as `MaskPredictionsView`'s.
        outcome_changed(object): the shown `FillMaskOutcome` changed (None: none).

    Args:
        context: the `AppContext`.
        delay_ms: debounce pause before a prediction starts.
        parent: the parent widget.
    """

    prediction_chosen = Signal(str, int, int, str)
    outcome_changed = Signal(object)

    def __init__(self, context, delay_ms=TYPING_DELAY_MS, parent=None):
        super().__init__(parent)
        self.setObjectName("modelComparisonPane")
        self.context = context
        self._source = None
        self._request = None

        self.runner = LatestRequestRunner(context.inference_pool, delay_ms, self)
        self.runner.result.connect(self._show_outcome)
        self.runner.error.connect(self._show_error)

        self.source_edit = QLineEdit()
        self.source_edit.setObjectName("comparisonSourceEdit")
        self.source_edit.setPlaceholderText("preset name or model folder")
        self.source_edit.setToolTip(
            "The second model: a built-in preset name, a kbert preset folder, or a Hugging "
            "Face, Google or keras-hub checkpoint folder. Press Enter to compare."
        )
        self.source_edit.returnPressed.connect(self.compare)
        self.folder_button = QToolButton()
        self.folder_button.setText("…")
        self.folder_button.setToolTip("Choose the second model's folder.")
        self.folder_button.clicked.connect(self._choose_folder)
        self.recent_menu = QMenu(self)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.recent_button = QToolButton()
        self.recent_button.setText("Recent")
        self.recent_button.setToolTip("Models opened before, and the built-in presets.")
        self.recent_button.setMenu(self.recent_menu)
        self.recent_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setObjectName("compareButton")
        self.compare_button.setToolTip("Show the second model's predictions next to the first's.")
        self.compare_button.clicked.connect(self.compare)
        self.stop_button = QToolButton()
        self.stop_button.setText("Stop")
        self.stop_button.setObjectName("stopComparingButton")
        self.stop_button.setToolTip("Stop comparing.")
        self.stop_button.clicked.connect(self.stop_comparing)
        self.stop_button.setEnabled(False)

        picker = QHBoxLayout()
        picker.setSpacing(4)
        picker.addWidget(QLabel("Compare with"))
        picker.addWidget(self.source_edit, 1)
        picker.addWidget(self.folder_button)
        picker.addWidget(self.recent_button)
        picker.addWidget(self.compare_button)
        picker.addWidget(self.stop_button)

        self.view = MaskPredictionsView("Second model")
        self.view.setObjectName("comparisonPredictionsView")
        self.view.prediction_chosen.connect(self.prediction_chosen)
        self.view.show_hint(IDLE_HINT)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(picker)
        layout.addWidget(self.view, 1)

    @property
    def comparison_source(self):
        """The second model, or None while not comparing."""
        return self._source

    def set_comparison_source(self, source):
        """Compares with `source` (a preset name or folder); None stops comparing."""
        self.runner.cancel()
        self._source = str(source) if source else None
        self.stop_button.setEnabled(self._source is not None)
        self.outcome_changed.emit(None)
        if self._source is None:
            self.view.set_title("Second model")
            self.view.show_hint(IDLE_HINT)
            return
        self.source_edit.setText(self._source)
        self.view.set_title(display_name(self._source))
        self.view.title_label.setToolTip(self._source)
        self.view.clear()
        if self._request is not None:
            self.request(*self._request)

    @Slot()
    def compare(self):
        source = self.source_edit.text().strip()
        if source:
            self.set_comparison_source(source)

    @Slot()
    def stop_comparing(self):
        self.set_comparison_source(None)

    def request(self, text, top_k, targets):
        """Predicts `text` with the second model (when comparing)."""
        self._request = (text, top_k, targets)
        if self._source is None:
            return
        if MASK_TOKEN not in text:
            self.runner.cancel()
            self.view.show_hint(NO_MASK_HINT)
            self.outcome_changed.emit(None)
            return
        self.runner.submit(
            FillMaskOutcome.compute, self.context.models, self._source, text, top_k, targets
        )

    @Slot(object)
    def _show_outcome(self, outcome):
        self.view.show_outcome(outcome)
        self.outcome_changed.emit(outcome)

    @Slot(str)
    def _show_error(self, message):
        self.view.show_error(message)
        self.outcome_changed.emit(None)

    @Slot()
    def _choose_folder(self):
        folder = self.context.file_dialogs.existing_folder(
            self, "Choose the model to compare with", "models"
        )
        if folder:
            self.set_comparison_source(folder)

    @Slot()
    def _fill_recent_menu(self):
        from kbert.model_table import model_class
        from kbert.presets import BUILTIN_PRESETS
        from kbert.presets.preset_registry import builtin_class_name

        self.recent_menu.clear()
        recent = self.context.models.recent_sources()
        # The built-in models that fill masks; a task model's own encoder has no masked-LM.
        builtin = [
            name for name in sorted(BUILTIN_PRESETS)
            if name not in recent and model_class(builtin_class_name(name)).app_tab == "masked-words"
        ]
        for source in recent + builtin:
            self.recent_menu.addAction(
                source, lambda source=source: self.set_comparison_source(source)
            )
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none yet)").setEnabled(False)
