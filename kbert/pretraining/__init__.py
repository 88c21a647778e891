"""Pretraining data: vocabulary, documents, instances, masking and shards.

`VocabularyTrainer` learns a WordPiece vocabulary; `DocumentReader` streams documents
from text; `TokenizedCorpus` caches their ids on disk; `InstanceBuilder` makes BERT's
sentence-pair instances with masks (`masking.mask_tokens`); `ShardWriter` and
`ShardReader` store and read them; `DynamicMasking` masks afresh inside the train
step. `create_pretraining_data` runs the whole pipeline. `PretrainingLoop` trains a
`BertPretrainer` on the shards (`ShardDataset`, `PretrainingObjective`);
`ContinuedPretraining` continues a model's pretraining on plain text files.

Names load lazily: only `DynamicMasking` needs Keras.
"""

from kbert.lazy_imports import lazy_attributes

_PUBLIC_NAMES = {
    "ContinuedPretraining": "kbert.pretraining.continued_pretraining",
    "DocumentReader": "kbert.pretraining.document_reader",
    "DynamicMasking": "kbert.pretraining.dynamic_masking",
    "InstanceBuilder": "kbert.pretraining.instance_builder",
    "ShardReader": "kbert.pretraining.shard_reader",
    "ShardWriter": "kbert.pretraining.shard_writer",
    "TokenizedCorpus": "kbert.pretraining.tokenized_corpus",
    "VocabularyTrainer": "kbert.pretraining.vocabulary_trainer",
    "create_pretraining_data": "kbert.pretraining.pretraining_data",
    "mask_tokens": "kbert.preprocessing.masking",
    "PretrainingConfig": "kbert.pretraining.pretraining_config",
    "PretrainingLoop": "kbert.pretraining.pretraining_loop",
    "PretrainingObjective": "kbert.pretraining.pretraining_objective",
    "PretrainingResult": "kbert.pretraining.pretraining_result",
    "ShardDataset": "kbert.pretraining.shard_dataset",
    "split_into_sentences": "kbert.pretraining.document_reader",
}

__all__ = sorted(_PUBLIC_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
