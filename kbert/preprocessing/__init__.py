"""From what users have (strings, labels) to model inputs: tokenizing, segment packing, batching.

Each task model carries a preprocessor (`model.preprocessor`), so that `fit`,
`evaluate` and `predict` take raw strings, and data as users hold it: per-example
records, pandas DataFrames and Hugging Face datasets, read for every task by
`data_forms` through the task's `RecordFields` (pandas and `datasets` are never
imported). Batches are padded to a few length buckets
(`length_buckets`, `BucketedDataset`), so a compiled step is traced for a handful of
shapes; `DEFAULT_BATCH_SIZE` is the one batch size used wherever none is given.

Names load lazily (`kbert.lazy_imports`): the batch shapes (`length_buckets`) import
no Keras, so the command line's parser and the configs can use them.
"""

from kbert.lazy_imports import lazy_attributes
from kbert.lazy_imports import names_by_module

_PUBLIC_NAMES = names_by_module(
    {
        "kbert.preprocessing.bert_preprocessor": ("BertPreprocessor",),
        "kbert.preprocessing.bucketed_dataset": ("BucketedDataset",),
        "kbert.preprocessing.length_buckets": (
            "DEFAULT_BATCH_SIZE",
            "DEFAULT_LENGTH_BUCKETS",
            "INFERENCE_LENGTH_BUCKETS",
            "bucket_length",
            "inference_padding_bound",
            "length_buckets",
            "pad_to_bucket",
        ),
        "kbert.preprocessing.masked_lm_preprocessor": ("MaskedLMPreprocessor",),
        "kbert.preprocessing.pretrainer_preprocessor": ("PretrainerPreprocessor",),
        "kbert.preprocessing.multiple_choice_preprocessor": ("MultipleChoicePreprocessor",),
        "kbert.preprocessing.question_answerer_preprocessor": ("QuestionAnswererPreprocessor",),
        "kbert.preprocessing.record_fields": ("RecordFields",),
        "kbert.preprocessing.task_features": ("TaskFeatures",),
        "kbert.preprocessing.text_classifier_preprocessor": ("TextClassifierPreprocessor",),
        "kbert.preprocessing.token_classifier_preprocessor": ("TokenClassifierPreprocessor",),
    }
)

__all__ = sorted(_PUBLIC_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
