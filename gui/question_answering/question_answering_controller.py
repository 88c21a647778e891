"""The question-answering tab's behaviour: requests, the answers' views, model checks.

The widgets are in `question_answering_panel`, the texts in `question_answering_format`,
the work of a worker in `answer_report`.
"""

import html
import pathlib

from PySide6.QtCore import QObject
from PySide6.QtCore import QTimer
from PySide6.QtCore import Slot

from kbert.files.bounded_reader import read_bytes
from kbert_gui.question_answering.answer_report import TASK_CLASS
from kbert_gui.question_answering.answer_report import AnswerReport
from kbert_gui.question_answering.answer_request import AnswerRequest
from kbert_gui.question_answering.question_answering_format import ANSWER_EXPORT_COLUMNS
from kbert_gui.question_answering.question_answering_format import UNTRAINED_HEAD_WARNING
from kbert_gui.question_answering.question_answering_format import answer_rows
from kbert_gui.question_answering.question_answering_format import answer_details
from kbert_gui.question_answering.question_answering_format import answers_document
from kbert_gui.question_answering.question_answering_format import fresh_heads_tooltip
from kbert_gui.question_answering.question_answering_format import no_answer_comparison
from kbert_gui.question_answering.question_answering_format import no_answer_details
from kbert_gui.question_answering.question_answering_format import passage_info
from kbert_gui.question_answering.question_answering_format import passage_size_problem
from kbert_gui.question_answering.question_answering_format import quoted_answer
from kbert_gui.question_answering.question_answering_format import shading_legend
from kbert_gui.question_answering.question_answering_format import slider_threshold
from kbert_gui.services.export_files import data_actions
from kbert_gui.services.latest_request_runner import LatestRequestRunner
from kbert_gui.services.model_description import short_name
from kbert_gui.tab_key import TabKey
from kbert_gui.widgets import style

# Pause after the last keystroke before answering as you type.
LIVE_DELAY_MS = 500
# What Answer says about missing input (cleared once the input is there).
NO_QUESTION = "Type a question first."
NO_PASSAGE = "Paste a passage or open a text file first."
_INPUT_PROBLEMS = (NO_QUESTION, NO_PASSAGE)


class QuestionAnsweringController(QObject):
    """Drives a `QuestionAnsweringPanel`: asks the current model, shows its answers.

    Answer (button, Enter, Ctrl+Return) submits the question and passage to
    `BertQuestionAnswerer.answer` in the app's inference pool through `runner`, a
    `LatestRequestRunner`, so a newer question supersedes a stale one and the window
    never waits for the model; "Answer as you type" re-submits `LIVE_DELAY_MS` after
    each edit. A report is shown only while its passage and model are still the
    current ones: the best answer highlighted at exactly the characters `answer`
    returned and scrolled into view (not while the user types in the passage), the
    n-best table (selecting a row highlights and shows it instead; when "no answer"
    wins it still lists the best spans), the no-answer comparison and the
    probability shading, computed with the answer in the worker, so that the window
    only paints it. Editing the passage drops results whose offsets it made stale;
    another model drops them too and, once the tab is shown, loads the model to
    check its QA head.

    Args:
        panel: the `QuestionAnsweringPanel` (also the parent).
        context: the app's `AppContext`.
    """

    def __init__(self, panel, context):
        super().__init__(panel)
        self.panel = panel
        self.context = context
        self._checked_source = None
        self._has_results = False
        self._report = None
        self._scroll_on_select = True

        self.runner = LatestRequestRunner(context.inference_pool, delay_ms=0, parent=self)
        self.runner.result.connect(self._show_report)
        self.runner.error.connect(self._show_error)
        self.runner.busy_changed.connect(self._set_busy)
        self._live_timer = QTimer(self)
        self._live_timer.setSingleShot(True)
        self._live_timer.setInterval(LIVE_DELAY_MS)
        self._live_timer.timeout.connect(self._answer_quietly)

        panel.answer_button.clicked.connect(self.answer_now)
        panel.question_edit.returnPressed.connect(self.answer_now)
        for shortcut in panel.answer_shortcuts:
            shortcut.activated.connect(self.answer_now)
        panel.open_file_button.clicked.connect(self.open_text_file)
        panel.head_warning.linkActivated.connect(
            lambda href: context.follow_link(href, TabKey.QUESTION_ANSWERING)
        )
        panel.question_edit.textEdited.connect(self._schedule_live_answer)
        panel.question_edit.textChanged.connect(self._clear_input_problem)
        panel.passage_view.textChanged.connect(self._on_passage_changed)
        panel.passage_view.refused.connect(self._show_error)
        panel.answers_view.selectionModel().currentRowChanged.connect(self._on_row_changed)
        panel.top_k_spin.valueChanged.connect(self._schedule_live_answer)
        panel.allow_no_answer_check.toggled.connect(self._schedule_live_answer)
        panel.null_threshold_slider.valueChanged.connect(self._schedule_live_answer)
        panel.shade_check.toggled.connect(self._on_shading_toggled)
        context.models.source_changed.connect(self._on_source_changed)

    @Slot()
    def answer_now(self):
        """Answers the question from the passage now (Answer button, Ctrl+Return)."""
        self._submit(quiet=False)

    @property
    def null_threshold(self):
        """The threshold passed to `answer`, or None while "no answer" is not allowed."""
        if not self.panel.allow_no_answer_check.isChecked():
            return None
        return slider_threshold(self.panel.null_threshold_slider.value())

    @Slot()
    def open_text_file(self):
        """Asks for a text file and loads it as the passage."""
        path = self.context.file_dialogs.open_file(
            self.panel,
            "Open a passage",
            "Text files (*.txt *.text *.md);;All files (*)",
            "passages",
        )
        if path:
            self.load_passage_file(path)

    def load_passage_file(self, path):
        """Loads the UTF-8 text file `path` as the passage; True if it could.

        An unreadable, too large or non-UTF-8 file, or one that is no regular file (a
        FIFO, a device), leaves the passage as it was and says why in the error line.
        """
        path = pathlib.Path(path)
        # A passage opened any way (the dialog, a drop) is where the next dialog starts.
        self.context.file_dialogs.remember("passages", path)
        try:
            size = path.stat().st_size
            if path.is_file() and passage_size_problem(f"{path.name} is", size):
                raise ValueError(passage_size_problem(f"{path.name} is", size))
            # kbert's bounded reader: a FIFO or a device is refused, never waited on.
            text = read_bytes(path, "data").decode("utf-8-sig")  # drops a byte-order mark
            text = text.replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads
        except UnicodeDecodeError as error:
            byte = error.object[error.start]
            self.panel.error_banner.show_error(
                f"Cannot open {path.name}: it is not UTF-8 text (byte 0x{byte:02x} at offset "
                f"{error.start}). Save it as UTF-8 and open it again."
            )
            return False
        except OSError as error:
            self.panel.error_banner.show_error(
                f"Cannot open {path.name}: {error.strerror or error}."
            )
            return False
        except ValueError as error:
            self.panel.error_banner.show_error(str(error))
            return False
        if not self.panel.passage_view.set_passage(text):
            return False
        self.panel.error_banner.clear_error()
        self.context.status_message.emit(f"Opened {path} ({len(text):,} characters)")
        return True

    # --- Requests ---------------------------------------------------------------------

    @Slot()
    def _schedule_live_answer(self):
        if self.panel.live_check.isChecked():
            self._live_timer.start()

    @Slot()
    def _answer_quietly(self):
        self._submit(quiet=True)

    def _submit(self, quiet):
        """Queues a request; `quiet` ones (as you type) skip missing input silently."""
        self._live_timer.stop()
        question = self.panel.question_edit.text()
        passage = self.panel.passage_view.passage()
        problem = None
        if not question.strip():
            problem = NO_QUESTION
        elif not passage.strip():
            problem = NO_PASSAGE
        if problem is not None:
            if not quiet:
                self.panel.error_banner.show_error(problem)
            return
        self._clear_input_problem()
        request = AnswerRequest(
            source=self.context.models.source,
            question=question,
            passage=passage,
            top_k=self.panel.top_k_spin.value(),
            null_threshold=self.null_threshold,
            shade=self.panel.shade_check.isChecked(),
            quiet=quiet,
        )
        self.runner.submit(AnswerReport.compute, self.context.models, request)

    # --- Results ----------------------------------------------------------------------

    @Slot(object)
    def _show_report(self, report):
        request, result = report.request, report.result
        if (
            request.passage != self.panel.passage_view.passage()
            or request.source != self.context.models.source
        ):
            return  # the passage or model changed since: a newer request is due
        self.panel.error_banner.clear_error()
        self._checked_source = request.source
        self._has_results = True
        self._report = report
        self._show_head_warning(request.source, report.freshly_initialized_heads)
        self.panel.answers_model.set_answers(result.answers or report.best_spans)
        self.panel.passage_view.clear_answer()
        if report.shading is not None:
            self.panel.passage_view.set_probability_shading(report.shading)
            self._show_passage_info(shading_legend(report.shading.num_windows))
        else:
            self.panel.passage_view.clear_shading()
            self._show_passage_info()
        comparison = no_answer_comparison(result, report.best_span, request.null_threshold)
        if comparison is None:
            self.panel.no_answer_label.hide()
        else:
            self.panel.no_answer_label.setText(comparison)
            self.panel.no_answer_label.show()
        if result.is_impossible:
            self.panel.best_answer_label.setText("No answer")
            self.panel.best_answer_label.setStyleSheet(style.ERROR_TEXT_STYLE)
            self.panel.details_label.setText(no_answer_details(result))
            return
        best = result.answers[0]
        self.panel.best_answer_label.setStyleSheet("")
        self.panel.best_answer_label.setText(quoted_answer(best.text))
        self.panel.details_label.setText(answer_details(best))
        # While the user types in the passage, the view stays where they type.
        typing = request.quiet and self.panel.passage_view.hasFocus()
        self._scroll_on_select = not typing
        self.panel.answers_view.selectRow(0)
        self._scroll_on_select = True
        self.panel.passage_view.highlight_answer(best.start, best.end, scroll=not typing)

    # --- Export ---------------------------------------------------------------------

    def export_actions(self):
        """Save the n-best answers shown as CSV or JSON."""
        return data_actions(
            "Answers",
            lambda: (ANSWER_EXPORT_COLUMNS, answer_rows(self.panel.answers_model.answers())),
            lambda: answers_document(
                self._report.request.source,
                self._report.result,
                self.panel.answers_model.answers(),
            ),
            lambda: self._report is not None and self.panel.answers_model.rowCount() > 0,
        )

    @Slot(str)
    def _show_error(self, message):
        self.panel.error_banner.show_error(message)

    @Slot(bool)
    def _set_busy(self, busy):
        self.panel.busy_label.setVisible(busy)

    @Slot(object, object)
    def _on_row_changed(self, current, previous):
        if current.isValid():
            answer = self.panel.answers_model.answer_at(current.row())
            self.panel.passage_view.highlight_answer(
                answer.start, answer.end, scroll=self._scroll_on_select
            )

    def _show_head_warning(self, source, freshly_initialized_heads):
        warning = self.panel.head_warning
        if freshly_initialized_heads:
            name = html.escape(short_name(source), quote=False)
            warning.show_warning(UNTRAINED_HEAD_WARNING.format(name=name))
            warning.setToolTip(fresh_heads_tooltip(freshly_initialized_heads))
        else:
            warning.clear_warning()

    def _clear_results(self, message="Ask a question to see answers."):
        self._has_results = False
        self._report = None
        self.panel.answers_model.clear()
        self.panel.passage_view.clear_answer()
        self.panel.passage_view.clear_shading()
        self.panel.best_answer_label.setStyleSheet("")
        self.panel.best_answer_label.setText("—")
        self.panel.details_label.setText(message)
        self.panel.no_answer_label.hide()

    def _show_passage_info(self, extra=None):
        count = len(self.panel.passage_view.passage())
        self.panel.passage_info.setText(passage_info(count, extra))

    # --- Changes --------------------------------------------------------------------

    @Slot()
    def _clear_input_problem(self):
        # "Type a question first" and the like are stale once the user types.
        if self.panel.error_banner.message in _INPUT_PROBLEMS:
            self.panel.error_banner.clear_error()

    @Slot()
    def _on_passage_changed(self):
        self._clear_input_problem()
        # The results' offsets point into the old text.
        if self._has_results:
            self._clear_results()
        self._show_passage_info()
        self._schedule_live_answer()

    @Slot(bool)
    def _on_shading_toggled(self, checked):
        if not checked:
            self.panel.passage_view.clear_shading()
            self._show_passage_info()
        elif self._has_results:
            self._submit(quiet=True)

    @Slot(str)
    def _on_source_changed(self, source):
        self.runner.cancel()
        self._checked_source = None
        self.panel.head_warning.clear_warning()
        self.panel.error_banner.clear_error()
        self._clear_results(f"Model: {source}. Ask a question to see answers.")
        if self.panel.isVisible():
            self._check_model()
        self._schedule_live_answer()

    def tab_shown(self):
        """Checks the model's QA head when the tab shows a model it has not checked."""
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
            self._show_head_warning(source, freshly_initialized_heads)


def _load_model(worker, models, source):
    """Worker: loads the QA model of `source`; returns `(source, fresh head names)`."""
    model = models.model(TASK_CLASS, source)
    return source, tuple(model.freshly_initialized_heads)
