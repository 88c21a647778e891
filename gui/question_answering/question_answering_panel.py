"""The question-answering tab's widgets: the question, the passage, the answers, options."""

from PySide6.QtCore import Qt
from PySide6.QtCore import Slot
from PySide6.QtGui import QFont
from PySide6.QtGui import QKeySequence
from PySide6.QtGui import QShortcut
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QCheckBox
from PySide6.QtWidgets import QFormLayout
from PySide6.QtWidgets import QGroupBox
from PySide6.QtWidgets import QHBoxLayout
from PySide6.QtWidgets import QHeaderView
from PySide6.QtWidgets import QLabel
from PySide6.QtWidgets import QLineEdit
from PySide6.QtWidgets import QPushButton
from PySide6.QtWidgets import QSizePolicy
from PySide6.QtWidgets import QSlider
from PySide6.QtWidgets import QSpinBox
from PySide6.QtWidgets import QSplitter
from PySide6.QtWidgets import QTableView
from PySide6.QtWidgets import QVBoxLayout
from PySide6.QtWidgets import QWidget

from kbert_gui.question_answering.answer_list_model import ANSWER_COLUMN
from kbert_gui.question_answering.answer_list_model import AnswerListModel
from kbert_gui.question_answering.passage_view import PassageView
from kbert_gui.question_answering.question_answering_format import THRESHOLD_LIMIT
from kbert_gui.question_answering.question_answering_format import THRESHOLD_STEPS_PER_UNIT
from kbert_gui.question_answering.question_answering_format import threshold_text
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets import style
from kbert_gui.widgets.error_banner import ErrorBanner
from kbert_gui.widgets.warning_banner import WarningBanner

# A header section's margins and sort indicator around its title.
HEADER_TITLE_MARGIN = 24


class QuestionAnsweringPanel(QWidget):
    """The widgets and layout of the question-answering tab, with nothing behind them.

    Above, the question and the Answer button (also `answer_shortcuts`: Ctrl+Return
    and Ctrl+Enter anywhere in the tab), the error line and the untrained-head
    warning; left, the passage; right, the best answer, the n-best table and the
    options. The null-threshold slider is enabled by "Allow “no answer”" and its
    label follows it; everything else is `QuestionAnsweringController`'s to fill.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle(TabKey.QUESTION_ANSWERING.label)
        self._build_question_widgets()
        self._build_passage_widgets()
        self._build_answer_widgets()
        self._build_option_widgets()
        self._build_layout()
        self.answer_shortcuts = []
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.setWhatsThis("Answer the question from the passage")
            self.answer_shortcuts.append(shortcut)
        self.allow_no_answer_check.toggled.connect(self.null_threshold_slider.setEnabled)
        self.null_threshold_slider.valueChanged.connect(self._show_threshold)

    # --- The widgets, part by part --------------------------------------------------------

    def _build_question_widgets(self):
        self.question_edit = QLineEdit()
        self.question_edit.setObjectName("questionEdit")
        self.question_edit.setPlaceholderText("Ask a question about the passage…")
        self.question_edit.setClearButtonEnabled(True)
        self.question_edit.setToolTip(
            "The question. Press Enter or Ctrl+Return to answer it from the passage."
        )
        self.answer_button = QPushButton("Answer")
        self.answer_button.setObjectName("answerButton")
        self.answer_button.setDefault(True)
        self.answer_button.setToolTip("Find the answer in the passage (Ctrl+Return)")

        self.error_banner = ErrorBanner()
        self.head_warning = WarningBanner()

    def _build_passage_widgets(self):
        self.open_file_button = QPushButton("&Open text file…")
        self.open_file_button.setObjectName("openFileButton")
        self.open_file_button.setToolTip("Load the passage from a UTF-8 text file")
        self.passage_info = QLabel()
        self.passage_info.setObjectName("passageInfo")
        self.passage_info.setStyleSheet(style.HINT_STYLE)
        self.passage_view = PassageView()
        self.passage_view.setPlaceholderText(
            "Paste the passage to search here, or open a text file. Long passages are "
            "read in overlapping windows."
        )
        self.passage_view.setToolTip(
            "The passage the answer is taken from. The best answer (or the one selected "
            "in the table) is highlighted in yellow."
        )

    def _build_answer_widgets(self):
        self.best_answer_label = QLabel("—")
        self.best_answer_label.setObjectName("bestAnswerLabel")
        self.best_answer_label.setWordWrap(True)
        self.best_answer_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        font = QFont(self.best_answer_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.best_answer_label.setFont(font)
        self.details_label = QLabel("Ask a question to see answers.")
        self.details_label.setObjectName("answerDetails")
        self.details_label.setWordWrap(True)
        self.no_answer_label = QLabel()
        self.no_answer_label.setObjectName("noAnswerLabel")
        self.no_answer_label.setWordWrap(True)
        self.no_answer_label.hide()
        self.busy_label = QLabel("Answering…")
        self.busy_label.setObjectName("busyLabel")
        self.busy_label.setStyleSheet(style.BUSY_STYLE)
        self.busy_label.hide()

        self.answers_model = AnswerListModel(self)
        self.answers_view = QTableView()
        self.answers_view.setObjectName("answersView")
        self.answers_view.setModel(self.answers_model)
        self.answers_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.answers_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.answers_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.answers_view.setAlternatingRowColors(True)
        # A long answer wraps in its column (rows grow to fit) rather than being cut off.
        self.answers_view.setWordWrap(True)
        self.answers_view.setToolTip(
            "The n best answers; select one to highlight it in the passage"
        )
        header = self.answers_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ANSWER_COLUMN, QHeaderView.ResizeMode.Stretch)
        # The stretched Answer column shrinks with the window, never below its title
        # (at the minimum size it was cut to "nswe"): the table is as wide as the
        # other columns and that title at least.
        header.sectionResized.connect(self._keep_answer_title_whole)
        self._keep_answer_title_whole()
        self.answers_view.verticalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )

    def _keep_answer_title_whole(self, *_):
        view, header = self.answers_view, self.answers_view.horizontalHeader()
        title = self.answers_model.headerData(ANSWER_COLUMN, Qt.Orientation.Horizontal)
        others = sum(
            header.sectionSize(column)
            for column in range(header.count())
            if column != ANSWER_COLUMN and not header.isSectionHidden(column)
        )
        answer = header.fontMetrics().horizontalAdvance(title) + HEADER_TITLE_MARGIN
        frame = view.frameWidth() * 2 + view.verticalHeader().sizeHint().width()
        view.setMinimumWidth(others + answer + frame)

    def _build_option_widgets(self):
        self.top_k_spin = QSpinBox()
        self.top_k_spin.setObjectName("topKSpin")
        self.top_k_spin.setRange(1, 50)
        self.top_k_spin.setValue(5)
        self.top_k_spin.setToolTip("How many of the best answers to list")
        self.top_k_spin.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.allow_no_answer_check = QCheckBox("Allow “no answer”")
        self.allow_no_answer_check.setObjectName("allowNoAnswerCheck")
        self.allow_no_answer_check.setToolTip(
            "For SQuAD 2.0 models: answer “no answer” when the model's no-answer score "
            "beats the best span's score by more than the null threshold"
        )
        self.null_threshold_slider = QSlider(Qt.Orientation.Horizontal)
        self.null_threshold_slider.setObjectName("nullThresholdSlider")
        self.null_threshold_slider.setRange(
            -THRESHOLD_LIMIT * THRESHOLD_STEPS_PER_UNIT, THRESHOLD_LIMIT * THRESHOLD_STEPS_PER_UNIT
        )
        self.null_threshold_slider.setValue(0)
        self.null_threshold_slider.setPageStep(THRESHOLD_STEPS_PER_UNIT)
        self.null_threshold_slider.setEnabled(False)
        self.null_threshold_slider.setToolTip(
            "Null threshold: “no answer” when (no-answer score − best span score) is above "
            "it. Lower means “no answer” more often; 0 is BERT's default."
        )
        self.null_threshold_label = QLabel()
        self.null_threshold_label.setObjectName("nullThresholdLabel")
        self.null_threshold_label.setMinimumWidth(
            self.null_threshold_label.fontMetrics().horizontalAdvance("−20.0") + 8
        )
        self.null_threshold_label.setAlignment(
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        self._show_threshold(0)
        self.shade_check = QCheckBox("Shade start/end probabilities")
        self.shade_check.setObjectName("shadeCheck")
        self.shade_check.setToolTip(
            "Tint every passage token by how likely an answer starts (blue) or ends (red) "
            "there; hover a token for the numbers"
        )
        self.live_check = QCheckBox("Answer as you type")
        self.live_check.setObjectName("liveCheck")
        self.live_check.setChecked(True)
        self.live_check.setToolTip("Re-answer a moment after the question or passage changes")

    def _build_layout(self):
        question_row = QHBoxLayout()
        question_row.setSpacing(8)
        question_label = QLabel("&Question:")
        question_label.setBuddy(self.question_edit)
        question_row.addWidget(question_label)
        question_row.addWidget(self.question_edit, 1)
        question_row.addWidget(self.answer_button)

        passage_header = QHBoxLayout()
        passage_title = QLabel("<b>Passage</b>")
        passage_header.addWidget(passage_title)
        passage_header.addWidget(self.passage_info, 1)
        passage_header.addWidget(self.open_file_button)
        passage_panel = QWidget()
        passage_layout = QVBoxLayout(passage_panel)
        passage_layout.setContentsMargins(0, 0, 4, 0)
        passage_layout.addLayout(passage_header)
        passage_layout.addWidget(self.passage_view, 1)

        answer_header = QHBoxLayout()
        answer_header.addWidget(QLabel("<b>Best answer</b>"))
        answer_header.addStretch(1)
        answer_header.addWidget(self.busy_label)
        options = QGroupBox("Options")
        options_layout = QFormLayout(options)
        options_layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        options_layout.addRow("Answers to list:", self.top_k_spin)
        threshold_row = QHBoxLayout()
        threshold_row.addWidget(self.null_threshold_slider, 1)
        threshold_row.addWidget(self.null_threshold_label)
        options_layout.addRow(self.allow_no_answer_check)
        options_layout.addRow("Null threshold:", threshold_row)
        options_layout.addRow(self.shade_check)
        options_layout.addRow(self.live_check)

        results_panel = QWidget()
        results_layout = QVBoxLayout(results_panel)
        results_layout.setContentsMargins(4, 0, 0, 0)
        results_layout.addLayout(answer_header)
        results_layout.addWidget(self.best_answer_label)
        results_layout.addWidget(self.details_label)
        results_layout.addWidget(self.no_answer_label)
        results_layout.addSpacing(4)
        results_layout.addWidget(QLabel("<b>All answers</b>"))
        results_layout.addWidget(self.answers_view, 1)
        results_layout.addWidget(options)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(passage_panel)
        splitter.addWidget(results_panel)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(8)
        layout.addLayout(question_row)
        layout.addWidget(self.error_banner)
        layout.addWidget(self.head_warning)
        layout.addWidget(splitter, 1)

    @Slot(int)
    def _show_threshold(self, value):
        self.null_threshold_label.setText(threshold_text(value))
