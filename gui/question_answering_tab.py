"""The question-answering tab: ask about a passage, see the answer highlighted in it."""

import pathlib
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtCore import QTimer
from PySide6.QtCore import Slot
from PySide6.QtGui import QFont
from PySide6.QtGui import QKeySequence
from PySide6.QtGui import QShortcut
from PySide6.QtWidgets import QAbstractItemView
from PySide6.QtWidgets import QCheckBox
from PySide6.QtWidgets import QFileDialog
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

from kbert_gui.answer_list_model import ANSWER_COLUMN
from kbert_gui.answer_list_model import AnswerListModel
from kbert_gui.error_banner import ErrorBanner
from kbert_gui.latest_request_runner import LatestRequestRunner
from kbert_gui.passage_view import PassageView

TASK_CLASS = "BertQuestionAnswerer"
# Pause after the last keystroke before answering as you type.
LIVE_DELAY_MS = 500
# The null-threshold slider moves in tenths over [-20, 20].
THRESHOLD_STEPS_PER_UNIT = 10
THRESHOLD_LIMIT = 20
# Bigger files are more than a passage; the user can paste the part they need.
MAX_PASSAGE_BYTES = 1_000_000
UNTRAINED_HEAD_WARNING = (
    "This model has no trained QA head: fine-tune it on SQuAD-style data first "
    '(<a href="fine-tuning">Fine-tuning tab</a>, task “question answering”); '
    "answers are random."
)


@dataclass(frozen=True)
class _AnswerRequest:
    """What the user asked, copied off the widgets for a worker."""

    source: str
    question: str
    passage: str
    top_k: int
    null_threshold: object
    shade: bool


@dataclass(frozen=True)
class _AnswerReport:
    """A worker's findings: `answer`'s result, and what the view shows besides."""

    request: _AnswerRequest
    result: object  # kbert.inference.AnswerResult
    best_span: object  # the best span `answer` rejected for "no answer", else None
    probabilities: object  # kbert.inference.SpanProbabilities, when shading
    freshly_initialized_heads: tuple


class QuestionAnsweringTab(QWidget):
    """Extractive QA with the current model: the answer is highlighted in the passage.

    The user types a question and pastes a passage (or opens a UTF-8 text file) and
    presses Answer (Ctrl+Return); with "Answer as you type" it re-answers a moment
    after each edit. `BertQuestionAnswerer.answer` runs in the app's inference pool
    through a `LatestRequestRunner`, so a newer question supersedes a stale one and
    the window never waits for the model. The best answer is highlighted in the
    passage at exactly the characters `answer` returned; the n-best table lists the
    others, and selecting one highlights it instead. Long passages are windowed by
    `answer` itself.

    For SQuAD 2.0 models, "Allow 'no answer'" passes the slider's `null_threshold`
    and shows the no-answer score against the best span's. "Shade start/end
    probabilities" tints every token by `kbert.inference.span_probabilities`. A model
    whose QA head was never trained (a pretrained checkpoint) gets an inline warning.

    Args:
        context: the app's `AppContext`.
        parent: the parent widget.
    """

    def __init__(self, context, parent=None):
        super().__init__(parent)
        self.context = context
        self.setWindowTitle("Question answering")
        self._checked_source = None
        self._has_results = False
        self._last_folder = str(pathlib.Path.home())

        self._runner = LatestRequestRunner(context.inference_pool, delay_ms=0, parent=self)
        self._runner.result.connect(self._show_report)
        self._runner.error.connect(self._show_error)
        self._runner.busy_changed.connect(self._set_busy)
        self._live_timer = QTimer(self)
        self._live_timer.setSingleShot(True)
        self._live_timer.setInterval(LIVE_DELAY_MS)
        self._live_timer.timeout.connect(self._answer_quietly)

        self._build_widgets()
        self._build_layout()
        self._connect()
        context.models.source_changed.connect(self._on_source_changed)

    # --- Construction ----------------------------------------------------------------

    def _build_widgets(self):
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
        self.head_warning = QLabel()
        self.head_warning.setObjectName("headWarning")
        self.head_warning.setWordWrap(True)
        self.head_warning.setTextFormat(Qt.TextFormat.RichText)
        self.head_warning.setStyleSheet(
            "QLabel#headWarning { color: #6d4c00; background: #fff8e1;"
            " border: 1px solid #ffe082; border-radius: 4px; padding: 6px; }"
        )
        self.head_warning.hide()

        self.open_file_button = QPushButton("&Open text file…")
        self.open_file_button.setObjectName("openFileButton")
        self.open_file_button.setToolTip("Load the passage from a UTF-8 text file")
        self.passage_info = QLabel()
        self.passage_info.setObjectName("passageInfo")
        self.passage_info.setStyleSheet("color: palette(mid);")
        self.passage_view = PassageView()
        self.passage_view.setPlaceholderText(
            "Paste the passage to search here, or open a text file. Long passages are "
            "read in overlapping windows."
        )
        self.passage_view.setToolTip(
            "The passage the answer is taken from. The best answer (or the one selected "
            "in the table) is highlighted in yellow."
        )

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
        self.busy_label.setStyleSheet("color: palette(mid); font-style: italic;")
        self.busy_label.hide()

        self.answers_model = AnswerListModel(self)
        self.answers_view = QTableView()
        self.answers_view.setObjectName("answersView")
        self.answers_view.setModel(self.answers_model)
        self.answers_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.answers_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.answers_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.answers_view.setAlternatingRowColors(True)
        self.answers_view.setWordWrap(False)
        self.answers_view.setToolTip(
            "The n best answers; select one to highlight it in the passage"
        )
        header = self.answers_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ANSWER_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.answers_view.verticalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents
        )

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

    def _connect(self):
        self.answer_button.clicked.connect(self.answer_now)
        self.question_edit.returnPressed.connect(self.answer_now)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(self.answer_now)
        self.open_file_button.clicked.connect(self.open_text_file)
        self.head_warning.linkActivated.connect(self._open_tab)
        self.question_edit.textEdited.connect(self._schedule_live_answer)
        self.passage_view.textChanged.connect(self._on_passage_changed)
        self.answers_view.selectionModel().currentRowChanged.connect(self._on_row_changed)
        self.top_k_spin.valueChanged.connect(self._schedule_live_answer)
        self.allow_no_answer_check.toggled.connect(self.null_threshold_slider.setEnabled)
        self.allow_no_answer_check.toggled.connect(self._schedule_live_answer)
        self.null_threshold_slider.valueChanged.connect(self._show_threshold)
        self.null_threshold_slider.valueChanged.connect(self._schedule_live_answer)
        self.shade_check.toggled.connect(self._on_shading_toggled)

    # --- Public actions ---------------------------------------------------------------

    @Slot()
    def answer_now(self):
        """Answers the question from the passage now (Answer button, Ctrl+Return)."""
        self._submit(quiet=False)

    @property
    def null_threshold(self):
        """The threshold passed to `answer`, or None while "no answer" is not allowed."""
        if not self.allow_no_answer_check.isChecked():
            return None
        return self.null_threshold_slider.value() / THRESHOLD_STEPS_PER_UNIT

    @Slot()
    def open_text_file(self):
        """Asks for a text file and loads it as the passage."""
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open a passage",
            self._last_folder,
            "Text files (*.txt *.text *.md);;All files (*)",
        )
        if path:
            self.load_passage_file(path)

    def load_passage_file(self, path):
        """Loads the UTF-8 text file `path` as the passage; True if it could.

        An unreadable, too large or non-UTF-8 file leaves the passage as it was and
        says why in the error line.
        """
        path = pathlib.Path(path)
        self._last_folder = str(path.parent)
        try:
            size = path.stat().st_size
            if path.is_file() and size > MAX_PASSAGE_BYTES:
                raise ValueError(
                    f"{path.name} is {size / 1e6:.1f} MB; the QA tab opens passages up to "
                    f"{MAX_PASSAGE_BYTES / 1e6:.0f} MB. Paste the part you need instead."
                )
            # "utf-8-sig" drops a byte-order mark; text mode turns \r\n into \n.
            with open(path, encoding="utf-8-sig") as file:
                text = file.read()
        except UnicodeDecodeError as error:
            byte = error.object[error.start]
            self.error_banner.show_error(
                f"Cannot open {path.name}: it is not UTF-8 text (byte 0x{byte:02x} at offset "
                f"{error.start}). Save it as UTF-8 and open it again."
            )
            return False
        except OSError as error:
            self.error_banner.show_error(f"Cannot open {path.name}: {error.strerror or error}.")
            return False
        except ValueError as error:
            self.error_banner.show_error(str(error))
            return False
        self.error_banner.clear_error()
        self.passage_view.set_passage(text)
        self.context.status_message.emit(f"Opened {path} ({len(text):,} characters)")
        return True

    # --- Requests ---------------------------------------------------------------------

    @Slot()
    def _schedule_live_answer(self):
        if self.live_check.isChecked():
            self._live_timer.start()

    @Slot()
    def _answer_quietly(self):
        self._submit(quiet=True)

    def _submit(self, quiet):
        """Queues a request; `quiet` ones (as you type) skip missing input silently."""
        self._live_timer.stop()
        question = self.question_edit.text()
        passage = self.passage_view.passage()
        problem = None
        if not question.strip():
            problem = "Type a question first."
        elif not passage.strip():
            problem = "Paste a passage or open a text file first."
        if problem is not None:
            if not quiet:
                self.error_banner.show_error(problem)
            return
        request = _AnswerRequest(
            source=self.context.models.source,
            question=question,
            passage=passage,
            top_k=self.top_k_spin.value(),
            null_threshold=self.null_threshold,
            shade=self.shade_check.isChecked(),
        )
        self._runner.submit(_answer_question, self.context.models, request)

    # --- Results ----------------------------------------------------------------------

    @Slot(object)
    def _show_report(self, report):
        request, result = report.request, report.result
        if (
            request.passage != self.passage_view.passage()
            or request.source != self.context.models.source
        ):
            return  # the passage or model changed since: a newer request is due
        self.error_banner.clear_error()
        self._checked_source = request.source
        self._has_results = True
        self._show_head_warning(report.freshly_initialized_heads)
        self.answers_model.set_answers(result.answers)
        self.passage_view.clear_answer()
        if report.probabilities is not None:
            shading = report.probabilities
            self.passage_view.set_probability_shading(
                shading.spans, shading.start_probabilities, shading.end_probabilities
            )
            windows = shading.num_windows
            self._show_passage_info(
                f"{windows} window{'s' if windows != 1 else ''} · shading: "
                '<span style="color:#1e88e5">■</span> start '
                '<span style="color:#e53935">■</span> end'
            )
        else:
            self.passage_view.clear_shading()
            self._show_passage_info()
        self._show_no_answer_comparison(report)
        if result.is_impossible:
            self.best_answer_label.setText("No answer")
            self.best_answer_label.setStyleSheet("color: #8a1c1c;")
            self.details_label.setText(
                "The passage has no words to answer from."
                if result.no_answer_score is None
                else "The model finds no answer to this question in the passage."
            )
            return
        best = result.answers[0]
        self.best_answer_label.setStyleSheet("")
        self.best_answer_label.setText(f"“{' '.join(best.text.split())}”")
        self.details_label.setText(
            f"score {best.score:.2f} · probability {best.probability:.1%} · characters "
            f"{best.start}–{best.end} · window {best.window + 1}"
        )
        # Selecting the best row highlights it (`_on_row_changed`).
        self.answers_view.selectRow(0)
        self.passage_view.highlight_answer(best.start, best.end)

    def _show_no_answer_comparison(self, report):
        result = report.result
        if result.no_answer_score is None:
            self.no_answer_label.hide()
            return
        threshold = report.request.null_threshold
        best = report.best_span if result.is_impossible else result.answers[0]
        difference = result.no_answer_score - best.score
        text = f"No-answer score {result.no_answer_score:.2f} vs best span {best.score:.2f}"
        if result.is_impossible:
            text += (
                f" (“{' '.join(best.text.split())}”): the difference {difference:+.2f} is above "
                f"the null threshold {threshold:+.1f}."
            )
        elif threshold is not None:
            text += (
                f": the difference {difference:+.2f} is within the null threshold {threshold:+.1f}."
            )
        else:
            text += "."
        self.no_answer_label.setText(text)
        self.no_answer_label.show()

    @Slot(str)
    def _show_error(self, message):
        self.error_banner.show_error(message)

    @Slot(bool)
    def _set_busy(self, busy):
        self.busy_label.setVisible(busy)

    @Slot(object, object)
    def _on_row_changed(self, current, previous):
        if current.isValid():
            answer = self.answers_model.answer_at(current.row())
            self.passage_view.highlight_answer(answer.start, answer.end)

    def _show_head_warning(self, freshly_initialized_heads):
        if freshly_initialized_heads:
            self.head_warning.setText(UNTRAINED_HEAD_WARNING)
            self.head_warning.setToolTip(
                f"Freshly initialised: {', '.join(freshly_initialized_heads)}"
            )
            self.head_warning.show()
        else:
            self.head_warning.hide()

    def _clear_results(self, message="Ask a question to see answers."):
        self._has_results = False
        self.answers_model.clear()
        self.passage_view.clear_answer()
        self.passage_view.clear_shading()
        self.best_answer_label.setStyleSheet("")
        self.best_answer_label.setText("—")
        self.details_label.setText(message)
        self.no_answer_label.hide()

    def _show_passage_info(self, extra=None):
        count = len(self.passage_view.passage())
        text = f"{count:,} characters" if count else ""
        if extra and count:
            text += f" · {extra}"
        self.passage_info.setText(text)

    # --- Changes --------------------------------------------------------------------

    @Slot()
    def _on_passage_changed(self):
        # The results' offsets point into the old text.
        if self._has_results:
            self._clear_results()
        self._show_passage_info()
        self._schedule_live_answer()

    @Slot(bool)
    def _on_shading_toggled(self, checked):
        if not checked:
            self.passage_view.clear_shading()
            self._show_passage_info()
        elif self._has_results:
            self._submit(quiet=True)

    @Slot(int)
    def _show_threshold(self, value):
        self.null_threshold_label.setText(f"{value / THRESHOLD_STEPS_PER_UNIT:+.1f}")

    @Slot(str)
    def _on_source_changed(self, source):
        self._runner.cancel()
        self._checked_source = None
        self.head_warning.hide()
        self.error_banner.clear_error()
        self._clear_results(f"Model: {source}. Ask a question to see answers.")
        if self.isVisible():
            self._check_model()
        self._schedule_live_answer()

    @Slot(str)
    def _open_tab(self, key):
        self.context.tab_requested.emit(key)

    def showEvent(self, event):
        super().showEvent(event)
        if self._checked_source != self.context.models.source:
            self._check_model()

    def _check_model(self):
        """Loads the model in the background, so its head can be checked up front."""
        source = self.context.models.source
        self._checked_source = source
        worker = self.context.run_inference(_load_model, self.context.models, source)
        worker.signals.result.connect(self._on_model_checked)
        worker.signals.error.connect(self._show_error)

    @Slot(object)
    def _on_model_checked(self, checked):
        source, freshly_initialized_heads = checked
        if source == self.context.models.source:
            self._show_head_warning(freshly_initialized_heads)


def _load_model(worker, models, source):
    """Worker: loads the QA model of `source`; returns `(source, fresh head names)`."""
    model = models.model(TASK_CLASS, source)
    return source, tuple(model.freshly_initialized_heads)


def _answer_question(models, request):
    """Worker: answers `request` (an `_AnswerRequest`) with the QA model of its source."""
    model = models.model(TASK_CLASS, request.source)
    result = model.answer(
        request.question,
        request.passage,
        top_k=request.top_k,
        null_threshold=request.null_threshold,
    )
    best_span = None
    if result.is_impossible and result.no_answer_score is not None:
        # What "no answer" beat: the best span without the threshold.
        best_span = model.answer(request.question, request.passage, top_k=1).answers[0]
    probabilities = None
    if request.shade:
        from kbert.inference import span_probabilities

        probabilities = span_probabilities(model, None, request.question, request.passage)
    return _AnswerReport(
        request=request,
        result=result,
        best_span=best_span,
        probabilities=probabilities,
        freshly_initialized_heads=tuple(model.freshly_initialized_heads),
    )
