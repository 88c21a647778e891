"""From what users have (strings, labels) to model inputs: tokenizing, packing, batching.

Each task model carries a preprocessor (`model.preprocessor`), so that `fit`,
`evaluate` and `predict` take raw strings. Batches are padded to a few length buckets
(`length_buckets`, `BucketedDataset`), so a compiled step is traced for a handful of
shapes.
"""

from kbert.preprocessing.bert_preprocessor import BertPreprocessor
from kbert.preprocessing.bucketed_dataset import BucketedDataset
from kbert.preprocessing.masked_lm_preprocessor import MaskedLMPreprocessor
from kbert.preprocessing.pretrainer_preprocessor import PretrainerPreprocessor
from kbert.preprocessing.question_answerer_preprocessor import QuestionAnswererPreprocessor
from kbert.preprocessing.task_features import TaskFeatures
from kbert.preprocessing.text_classifier_preprocessor import TextClassifierPreprocessor
from kbert.preprocessing.token_classifier_preprocessor import TokenClassifierPreprocessor

__all__ = [
    "BertPreprocessor",
    "BucketedDataset",
    "MaskedLMPreprocessor",
    "PretrainerPreprocessor",
    "QuestionAnswererPreprocessor",
    "TaskFeatures",
    "TextClassifierPreprocessor",
    "TokenClassifierPreprocessor",
]
