"""What the question-answering tab writes about an answer, the passage and the threshold.

Pure functions of kbert's `AnswerResult` and `AnswerSpan` values, no Qt, so that each
line the tab shows can be checked on its own.
"""

from kbert_gui import FINE_TUNING_LINK_PREFIX
from kbert_gui.widgets import style
from kbert_gui.widgets.probability_text import probability_text

# Bigger texts are more than a passage (the window would freeze for seconds taking them,
# and answering them allocates by the passage's square); the user takes the part they need.
MAX_PASSAGE_BYTES = 1_000_000
# The null-threshold slider moves in tenths over [-20, 20].
THRESHOLD_STEPS_PER_UNIT = 10
THRESHOLD_LIMIT = 20
# One line: what to open, or how to fine-tune (the link sets the fine-tuning task).
UNTRAINED_HEAD_WARNING = (
    "{name} has no trained QA head, so its answers are random: open a model fine-tuned "
    "for question answering (File ▸ Open model…), or "
    f'<a href="{FINE_TUNING_LINK_PREFIX}qa">fine-tune it on SQuAD-style data</a>.'
)


def utf8_size(text):
    """The size of `text` in UTF-8 bytes (a lone surrogate, which Qt may hand over,
    counts as three)."""
    return len(text.encode("utf-8", "surrogatepass"))


def passage_size_problem(what, size):
    """Why a passage of `size` UTF-8 bytes is refused, in one line, or "" where it is not.

    Args:
        what: what is refused, as the line starts ("notes.txt is", "The pasted text
            would make the passage").
        size: its size in bytes.
    """
    if size <= MAX_PASSAGE_BYTES:
        return ""
    return (
        f"{what} {size / 1e6:.1f} MB; the QA tab takes passages up to "
        f"{MAX_PASSAGE_BYTES / 1e6:.0f} MB. Paste or open the part you need instead."
    )


def slider_threshold(value):
    """The null threshold at the slider's integer `value`."""
    return value / THRESHOLD_STEPS_PER_UNIT


def threshold_text(value):
    """The label beside the slider: the threshold with its sign, to a tenth."""
    return f"{slider_threshold(value):+.1f}"


def quoted_answer(text):
    """An answer in quotes, its line breaks and runs of spaces folded to one space."""
    return f"“{' '.join(text.split())}”"


def answer_details(answer):
    """The line under the best answer: score, probability, characters, window."""
    return (
        f"score {answer.score:.2f} · probability {probability_text(answer.probability)} · "
        f"characters {answer.start}–{answer.end} · window {answer.window + 1}"
    )


def no_answer_details(result):
    """The line under "No answer": why there is none."""
    if result.no_answer_score is None:
        return "The passage has no words to answer from."
    return "The model finds no answer to this question in the passage."


def no_answer_comparison(result, best_span, threshold):
    """The no-answer score against the best span's, or None for a model without one.

    Args:
        result: the `AnswerResult`.
        best_span: the best span `answer` rejected for "no answer" (used when
            `result.is_impossible`).
        threshold: the null threshold the request passed, or None.
    """
    if result.no_answer_score is None:
        return None
    best = best_span if result.is_impossible else result.answers[0]
    difference = result.no_answer_score - best.score
    text = f"No-answer score {result.no_answer_score:.2f} vs best span {best.score:.2f}"
    if result.is_impossible:
        return text + (
            f" ({quoted_answer(best.text)}): the difference {difference:+.2f} is above "
            f"the null threshold {threshold:+.1f}."
        )
    if threshold is not None:
        return text + (
            f": the difference {difference:+.2f} is within the null threshold {threshold:+.1f}."
        )
    return text + "."


def shading_legend(num_windows):
    """What the passage line adds while shading: the windows read, and the colours."""
    return (
        f"{num_windows} window{'s' if num_windows != 1 else ''} · shading: "
        f'<span style="color:{style.START_PROBABILITY}">■</span> start '
        f'<span style="color:{style.END_PROBABILITY}">■</span> end'
    )


def passage_info(num_characters, extra=None):
    """The line beside the passage's title: its length (empty without a passage)."""
    text = f"{num_characters:,} characters" if num_characters else ""
    if extra and num_characters:
        text += f" · {extra}"
    return text


def fresh_heads_tooltip(freshly_initialized_heads):
    """The untrained-head warning's tooltip: which heads were initialised at random."""
    return f"Freshly initialised: {', '.join(freshly_initialized_heads)}"


# The columns of the exported n-best table, in order.
ANSWER_EXPORT_COLUMNS = (
    "rank",
    "answer",
    "start",
    "end",
    "score",
    "probability",
    "start_probability",
    "end_probability",
    "window",
)


def answer_rows(answers):
    """The exported rows of the n-best table: one dict per `AnswerSpan`, best first.

    Offsets are Python character offsets into the passage (`passage[start:end]` is the
    answer); `window` counts from 1, as the table shows it.
    """
    return [
        {
            "rank": rank,
            "answer": answer.text,
            "start": answer.start,
            "end": answer.end,
            "score": answer.score,
            "probability": answer.probability,
            "start_probability": answer.start_probability,
            "end_probability": answer.end_probability,
            "window": answer.window + 1,
        }
        for rank, answer in enumerate(answers, start=1)
    ]


def answers_document(source, result, answers):
    """The exported JSON of one question's answers.

    Args:
        source: the model that answered.
        result: the `AnswerResult`.
        answers: the answers the table lists (the best spans when "no answer" won).
    """
    return {
        "model": str(source),
        "question": result.question,
        "no_answer": result.is_impossible,
        "no_answer_score": result.no_answer_score,
        "answers": answer_rows(answers),
    }
