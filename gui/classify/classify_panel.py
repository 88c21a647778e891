"""The "Classify & tag" tab's widgets: the text (and pair, or endings), the head's
results, options."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QComboBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QPlainTextEdit
from PySide6.QtWidgets import QSplitter
from PySide6.QtWidgets import QStackedWidget
from PySide6.QtWidgets import QTableView
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.classify.choice_probability_model import ENDING_COLUMN
from kbert_gui.classify.choice_probability_model import PROBABILITY_COLUMN as CHOICE_COLUMN
from kbert_gui.classify.choice_probability_model import ChoiceProbabilityModel
from kbert_gui.classify.endings_editor import EndingsEditor
from kbert_gui.classify.entity_span_model import TEXT_COLUMN
from kbert_gui.classify.entity_span_model import EntitySpanModel
from kbert_gui.classify.label_probability_model import PROBABILITY_COLUMN
from kbert_gui.classify.label_probability_model import PROBABILITY_ROLE
from kbert_gui.classify.label_probability_model import LabelProbabilityModel
from kbert_gui.classify.saliency_panel import SaliencyPanel
from kbert_gui.classify.tagged_text_edit import TaggedTextEdit
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets import style
from kbert_gui.widgets.error_banner import ErrorBanner
from kbert_gui.widgets.probability_bar_delegate import ProbabilityBarDelegate
from kbert_gui.widgets.table_context_menu import TableContextMenu
from kbert_gui.widgets.warning_banner import WarningBanner

# The results stack's pages.
LABELS_PAGE, ENTITIES_PAGE, CHOICES_PAGE = range(3)


class ClassifyPanel(QWidget):
    """The widgets and layout of the "Classify & tag" tab, with nothing behind them.

    Above, what the model's head does (or the warning that it has none) and the error
    line; then the text, with the second text of a pair below it (classifiers), the
    sub-word option (taggers) or the editable endings of the context (multiple
    choice); below a splitter, the headline result and either the label table
    (probability bars), the entity table with its colour legend, or the endings with
    a probability bar each, the chosen one marked; below them, the "Why?" box of token
    saliency (`SaliencyPanel`). The `ClassifyController` fills them.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("classifyTab")
        self.setWindowTitle(TabKey.CLASSIFY.label)
        self._build_widgets()
        self._build_layout()

    def _build_widgets(self):
        self.head_label = QLabel("Loading the model…")
        self.head_label.setObjectName("headSummary")
        self.head_label.setWordWrap(True)
        self.head_label.setStyleSheet(style.HINT_STYLE)
        self.head_warning = WarningBanner()
        self.error_banner = ErrorBanner()

        self.text_edit = TaggedTextEdit()
        self.text_edit.setObjectName("classifyTextEdit")
        self.text_edit.setPlaceholderText("Type or paste a text…")
        self.text_edit.setToolTip(
            "The text to classify or tag; the result follows as you type. Entities are "
            "highlighted in the text; hover one for its label and score."
        )
        self.pair_edit = QPlainTextEdit()
        self.pair_edit.setObjectName("classifyPairEdit")
        self.pair_edit.setTabChangesFocus(True)
        self.pair_edit.setPlaceholderText(
            "Second text of a pair (optional): for models fine-tuned on text pairs"
        )
        self.pair_edit.setToolTip(
            "For pair classification (entailment, paraphrase, …): the second text. "
            "Leave empty to classify the first text alone."
        )
        self.pair_edit.setMaximumHeight(self.pair_edit.fontMetrics().lineSpacing() * 4 + 16)
        # Says when the second text does not suit what the classifier was trained on.
        self.pair_note = QLabel()
        self.pair_note.setObjectName("pairNote")
        self.pair_note.setWordWrap(True)
        self.pair_note.setStyleSheet(style.WARNING_TEXT_STYLE)
        self.pair_note.hide()
        self.aggregation_combo = QComboBox()
        self.aggregation_combo.setObjectName("aggregationCombo")
        self.aggregation_combo.addItem("first sub-word", "first")
        self.aggregation_combo.addItem("average of sub-words", "average")
        self.aggregation_combo.setToolTip(
            "How a word's tag comes from its word pieces: the first piece's (as in "
            "training) or the average over its pieces."
        )
        self.endings_editor = EndingsEditor()
        self.endings_editor.setObjectName("endingsEditor")
        self.endings_title = QLabel("<b>&Endings</b>")
        self.endings_title.setBuddy(self.endings_editor.line_edits()[0])
        self.aggregation_label = QLabel("Word tag from the")
        self.aggregation_label.setBuddy(self.aggregation_combo)
        self.busy_label = QLabel("Classifying…")
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.setStyleSheet(style.BUSY_STYLE)
        self.busy_label.hide()

        self.headline_label = QLabel("—")
        self.headline_label.setObjectName("classifyHeadline")
        self.headline_label.setWordWrap(True)
        self.headline_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFont(self.headline_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.headline_label.setFont(font)

        self.labels_model = LabelProbabilityModel(self)
        self.labels_view = _bar_table(
            self.labels_model, "labelsView", PROBABILITY_COLUMN, PROBABILITY_COLUMN
        )
        self.entities_model = EntitySpanModel(self)
        self.entities_view = _table(self.entities_model, "entitiesView")
        self.entities_view.horizontalHeader().setSectionResizeMode(
            TEXT_COLUMN, QHeaderView.ResizeMode.Stretch
        )
        self.choices_model = ChoiceProbabilityModel(self)
        self.choices_view = _bar_table(
            self.choices_model, "choicesView", CHOICE_COLUMN, ENDING_COLUMN
        )
        self.legend_label = QLabel()
        self.legend_label.setObjectName("entityLegend")
        self.legend_label.setWordWrap(True)
        self.legend_label.setTextFormat(Qt.TextFormat.RichText)
        self.saliency_panel = SaliencyPanel()

    def _build_layout(self):
        self.text_title = QLabel("<b>&Text</b>")
        self.text_title.setBuddy(self.text_edit)
        options = QHBoxLayout()
        options.setSpacing(8)
        options.addWidget(self.aggregation_label)
        options.addWidget(self.aggregation_combo)
        options.addStretch(1)
        options.addWidget(self.busy_label)
        input_widget = QWidget()
        input_layout = QVBoxLayout(input_widget)
        input_layout.setContentsMargins(0, 0, 0, 0)
        input_layout.setSpacing(6)
        input_layout.addWidget(self.text_title)
        input_layout.addWidget(self.text_edit, 1)
        input_layout.addWidget(self.pair_edit)
        input_layout.addWidget(self.pair_note)
        input_layout.addWidget(self.endings_title)
        input_layout.addWidget(self.endings_editor)
        input_layout.addLayout(options)

        entities_page = QWidget()
        entities_layout = QVBoxLayout(entities_page)
        entities_layout.setContentsMargins(0, 0, 0, 0)
        entities_layout.addWidget(self.legend_label)
        entities_layout.addWidget(self.entities_view, 1)
        self.results_stack = QStackedWidget()
        self.results_stack.insertWidget(LABELS_PAGE, self.labels_view)
        self.results_stack.insertWidget(ENTITIES_PAGE, entities_page)
        self.results_stack.insertWidget(CHOICES_PAGE, self.choices_view)
        results_widget = QWidget()
        results_layout = QVBoxLayout(results_widget)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.setSpacing(6)
        results_layout.addWidget(QLabel("<b>Result</b>"))
        results_layout.addWidget(self.headline_label)
        results_layout.addWidget(self.results_stack, 1)
        results_layout.addWidget(self.saliency_panel)

        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setObjectName("classifySplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(input_widget)
        self.splitter.addWidget(results_widget)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(8)
        layout.addWidget(self.head_label)
        layout.addWidget(self.head_warning)
        layout.addWidget(self.error_banner)
        layout.addWidget(self.splitter, 1)


def _table(model, name):
    view = QTableView()
    view.setObjectName(name)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    TableContextMenu(view)
    return view


def _bar_table(model, name, bar_column, stretch_column):
    """A `_table` whose `bar_column` paints `PROBABILITY_ROLE` as a bar and whose
    `stretch_column` takes the spare width."""
    view = _table(model, name)
    view.setItemDelegateForColumn(bar_column, ProbabilityBarDelegate(PROBABILITY_ROLE, parent=view))
    view.horizontalHeader().setSectionResizeMode(stretch_column, QHeaderView.ResizeMode.Stretch)
    return view
