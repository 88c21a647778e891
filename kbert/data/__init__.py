"""Data for fine-tuning and evaluation: readers, records, QA context windows.

Readers: classification tables (CSV, TSV, JSON Lines), CoNLL, SQuAD, and multiple
choice (SWAG's CSV, JSON Lines).

The readers need only the standard library and numpy, not Keras.
"""

from kbert.data.classification_reader import classification_label_names, read_classification
from kbert.data.conll_reader import detect_tag_scheme, label_names_from_tags, read_conll
from kbert.data.examples import ClassificationExample, GoldAnswer, QAExample
from kbert.data.examples import MultipleChoiceExample, TokenClassificationExample
from kbert.data.multiple_choice_reader import read_multiple_choice
from kbert.data.question_windowing import QuestionWindowing
from kbert.data.squad_reader import read_squad

__all__ = [
    "ClassificationExample",
    "GoldAnswer",
    "MultipleChoiceExample",
    "QAExample",
    "QuestionWindowing",
    "TokenClassificationExample",
    "classification_label_names",
    "detect_tag_scheme",
    "label_names_from_tags",
    "read_classification",
    "read_conll",
    "read_multiple_choice",
    "read_squad",
]
