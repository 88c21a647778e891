"""Pretraining data: vocabulary, documents, instances, masking and shards.

`VocabularyTrainer` learns a WordPiece vocabulary; `DocumentReader` streams documents
from text; `TokenizedCorpus` caches their ids on disk; `InstanceBuilder` makes BERT's
sentence-pair instances with masks (`masking.mask_tokens`); `ShardWriter` and
`ShardReader` store and read them; `DynamicMasking` masks afresh inside the train
step. `create_pretraining_data` runs the whole pipeline. `PretrainingLoop` trains a
`BertPretrainer` on the shards (`ShardDataset`, `PretrainingObjective`), optionally
packed several instances per row (`SequencePacker`, `PackedShardReader`);
`ContinuedPretraining` continues a model's pretraining on plain text files.

Names load lazily: only `DynamicMasking` needs Keras.
"""

from kbert.lazy_imports import lazy_attributes
from kbert.lazy_imports import names_by_module

_PUBLIC_NAMES = names_by_module(
    {
        "kbert.preprocessing.masking": ("mask_tokens",),
        "kbert.pretraining.continued_pretraining": ("ContinuedPretraining",),
        "kbert.pretraining.document_reader": ("DocumentReader", "split_into_sentences"),
        "kbert.pretraining.dynamic_masking": ("DynamicMasking",),
        "kbert.pretraining.instance_builder": ("InstanceBuilder",),
        "kbert.pretraining.packed_shard_reader": ("PackedShardReader",),
        "kbert.pretraining.pretraining_config": ("PretrainingConfig",),
        "kbert.pretraining.pretraining_data": ("create_pretraining_data",),
        "kbert.pretraining.pretraining_loop": ("PretrainingLoop",),
        "kbert.pretraining.pretraining_objective": ("PretrainingObjective",),
        "kbert.pretraining.pretraining_result": ("PretrainingResult",),
        "kbert.pretraining.sequence_packer": ("SequencePacker",),
        "kbert.pretraining.shard_dataset": ("ShardDataset",),
        "kbert.pretraining.shard_reader": ("ShardReader",),
        "kbert.pretraining.shard_writer": ("ShardWriter",),
        "kbert.pretraining.tokenized_corpus": ("TokenizedCorpus",),
        "kbert.pretraining.vocabulary_trainer": ("VocabularyTrainer",),
    }
)

__all__ = sorted(_PUBLIC_NAMES)
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
