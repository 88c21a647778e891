"""The answer to an `AnswerRequest`, made in a worker with all the view needs to show it."""

from dataclasses import dataclass

from kbert.model_table import class_with_verb
from kbert_gui.question_answering.passage_shading import PassageShading
from kbert_gui.question_answering.question_answering_format import passage_size_problem
from kbert_gui.question_answering.question_answering_format import utf8_size

# The verb whose results the tab shows, and the model class (a row of the model table)
# that answers with it, which the tab loads every model as.
ANSWER_VERB = "answer"
TASK_CLASS = class_with_verb(ANSWER_VERB).name


@dataclass(frozen=True)
class AnswerReport:
    """A worker's findings: `answer`'s result, and what the view shows besides.

    Attributes:
        request: the `AnswerRequest` answered.
        result: the `kbert.inference.AnswerResult`.
        best_spans: the best spans `answer` rejected for "no answer", else ().
        probabilities: the `kbert.inference.SpanProbabilities`, when shading.
        shading: their `PassageShading`, prepared for the view, when shading.
        freshly_initialized_heads: the model's heads that were never trained.
    """

    request: object
    result: object
    best_spans: tuple
    probabilities: object
    shading: object
    freshly_initialized_heads: tuple

    @property
    def best_span(self):
        """The best span "no answer" beat, or None."""
        return self.best_spans[0] if self.best_spans else None

    @classmethod
    def compute(cls, models, request):
        """Answers `request` with the QA model of its source. Call in a worker.

        `BertQuestionAnswerer.answer` with the request's top k and null threshold;
        when "no answer" wins, again without the threshold (the spans it beat); with
        `shade`, `kbert.inference.span_probabilities` and their `PassageShading`. A
        passage too large for the tab, or for the memory answering it takes, is a
        `ValueError` that says so in one line (never a `MemoryError`).
        """
        passage = request.passage
        problem = passage_size_problem("The passage is", utf8_size(passage))
        if problem:
            raise ValueError(problem)
        model = models.model(TASK_CLASS, request.source)
        try:
            return cls._answer(model, request)
        except MemoryError:
            raise ValueError(
                f"The passage ({len(passage):,} characters) is too long to answer in this "
                "computer's memory: answer from a shorter part of it."
            ) from None

    @classmethod
    def _answer(cls, model, request):
        result = model.answer(
            request.question,
            request.passage,
            top_k=request.top_k,
            null_threshold=request.null_threshold,
        )
        best_spans = ()
        if result.is_impossible and result.no_answer_score is not None:
            best_spans = model.answer(
                request.question, request.passage, top_k=request.top_k
            ).answers
        probabilities = shading = None
        if request.shade:
            from kbert.inference import span_probabilities

            probabilities = span_probabilities(model, None, request.question, request.passage)
            shading = PassageShading.from_probabilities(probabilities)
        return cls(
            request=request,
            result=result,
            best_spans=best_spans,
            probabilities=probabilities,
            shading=shading,
            freshly_initialized_heads=tuple(model.freshly_initialized_heads),
        )
