"""Data for fine-tuning and evaluation: readers, records, QA context windows.

Readers: classification tables (CSV, TSV, JSON Lines), CoNLL, SQuAD, and multiple
choice (SWAG's CSV, JSON Lines). Each stops at the first problem (`errors="raise"`, the
default) or reads the whole file and returns a `ReadResult`: the good examples and every
problem, a `ReadProblem(file, line, message)` (`errors="collect"`).

The readers need only the standard library and numpy, not Keras.
"""

from kbert.data.classification_reader import classification_label_names, read_classification
from kbert.data.conll_reader import detect_tag_scheme, label_names_from_tags, read_conll
from kbert.data.examples import ClassificationExample, GoldAnswer, QAExample
from kbert.data.examples import MultipleChoiceExample, TokenClassificationExample
from kbert.data.multiple_choice_reader import read_multiple_choice
from kbert.data.question_windowing import QuestionWindowing
from kbert.data.read_error import ReadError
from kbert.data.read_problem import ReadProblem
from kbert.data.read_result import ReadResult
from kbert.data.squad_reader import read_squad

__all__ = [
    "ClassificationExample",
    "GoldAnswer",
    "MultipleChoiceExample",
    "QAExample",
    "QuestionWindowing",
    "ReadError",
    "ReadProblem",
    "ReadResult",
    "TokenClassificationExample",
    "classification_label_names",
    "detect_tag_scheme",
    "label_names_from_tags",
    "read_classification",
    "read_conll",
    "read_multiple_choice",
    "read_squad",
]
