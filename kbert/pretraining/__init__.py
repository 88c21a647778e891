"""Pretraining data: vocabulary, documents, instances, masking and shards.

`VocabularyTrainer` learns a WordPiece vocabulary; `DocumentReader` streams documents
from text; `TokenizedCorpus` caches their ids on disk; `InstanceBuilder` makes BERT's
sentence-pair instances with masks (`masking.mask_tokens`); `ShardWriter` and
`ShardReader` store and read them; `DynamicMasking` masks afresh inside the train
step. `create_pretraining_data` runs the whole pipeline. `PretrainingLoop` trains a
`BertPretrainer` on the shards (`ShardDataset`, `PretrainingObjective`).

Names load lazily: only `DynamicMasking` needs Keras.
"""

import importlib

_PUBLIC_NAMES = {
    "DocumentReader": "kbert.pretraining.document_reader",
    "DynamicMasking": "kbert.pretraining.dynamic_masking",
    "InstanceBuilder": "kbert.pretraining.instance_builder",
    "ShardReader": "kbert.pretraining.shard_reader",
    "ShardWriter": "kbert.pretraining.shard_writer",
    "TokenizedCorpus": "kbert.pretraining.tokenized_corpus",
    "VocabularyTrainer": "kbert.pretraining.vocabulary_trainer",
    "create_pretraining_data": "kbert.pretraining.pretraining_data",
    "mask_tokens": "kbert.pretraining.masking",
    "PretrainingConfig": "kbert.pretraining.pretraining_config",
    "PretrainingLoop": "kbert.pretraining.pretraining_loop",
    "PretrainingObjective": "kbert.pretraining.pretraining_objective",
    "PretrainingResult": "kbert.pretraining.pretraining_result",
    "ShardDataset": "kbert.pretraining.shard_dataset",
    "split_into_sentences": "kbert.pretraining.document_reader",
}

__all__ = sorted(_PUBLIC_NAMES)


def __getattr__(name):
    if name in _PUBLIC_NAMES:
        return getattr(importlib.import_module(_PUBLIC_NAMES[name]), name)
    raise AttributeError(f"module 'kbert.pretraining' has no attribute {name!r}")


def __dir__():
    return __all__
