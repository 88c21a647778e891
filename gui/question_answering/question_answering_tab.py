"""The question-answering tab: ask about a passage, see the answer highlighted in it."""

from kbert_gui.question_answering.question_answering_controller import QuestionAnsweringController
from kbert_gui.question_answering.question_answering_panel import QuestionAnsweringPanel


class QuestionAnsweringTab(QuestionAnsweringPanel):
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

    The widgets are the `QuestionAnsweringPanel`'s; `controller` (a
    `QuestionAnsweringController`) holds the state and does the work.

    Args:
        context: the app's `AppContext`.
        parent: the parent widget.
    """

    def __init__(self, context, parent=None):
        super().__init__(parent)
        self.context = context
        self.controller = QuestionAnsweringController(self, context)

    def export_actions(self):
        """What File > Export offers here: the n-best answers as CSV or JSON."""
        return self.controller.export_actions()

    def answer_now(self):
        """Answers the question from the passage now (Answer button, Ctrl+Return)."""
        self.controller.answer_now()

    @property
    def null_threshold(self):
        """The threshold passed to `answer`, or None while "no answer" is not allowed."""
        return self.controller.null_threshold

    def open_text_file(self):
        """Asks for a text file and loads it as the passage."""
        self.controller.open_text_file()

    def load_passage_file(self, path):
        """Loads the UTF-8 text file `path` as the passage; True if it could.

        An unreadable, too large or non-UTF-8 file leaves the passage as it was and
        says why in the error line.
        """
        return self.controller.load_passage_file(path)

    def showEvent(self, event):
        super().showEvent(event)
        self.controller.tab_shown()
