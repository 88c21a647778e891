"""Data for fine-tuning and evaluation: readers, records, and (from other modules) batching.

The readers need only the standard library and numpy, not Keras.
"""

from kbert.data.classification_reader import classification_label_names, read_classification
from kbert.data.conll_reader import detect_tag_scheme, label_names_from_tags, read_conll
from kbert.data.examples import Answer, ClassificationExample, QAExample, TokenClassificationExample
from kbert.data.squad_reader import read_squad

__all__ = [
    "Answer",
    "ClassificationExample",
    "QAExample",
    "TokenClassificationExample",
    "classification_label_names",
    "detect_tag_scheme",
    "label_names_from_tags",
    "read_classification",
    "read_conll",
    "read_squad",
]
