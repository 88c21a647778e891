"""What a pretraining run is built from, by its config: the shard readers (packed or
not), the `BertPretrainer`, dynamic masking and the optimiser."""

import logging

from kbert.pretraining.packed_shard_reader import PackedShardReader
from kbert.pretraining.shard_reader import ShardReader
from kbert.training.optimization import create_optimizer

logger = logging.getLogger("kbert.pretraining")


def shard_readers(train_data, eval_data, config):
    """`(reader, eval_reader)` of the shards; the training rows packed if the config asks.

    Args:
        train_data: a shard folder (or `ShardReader`).
        eval_data: a shard folder (or `ShardReader`); None for none.
        config: the run's `PretrainingConfig`.
    """
    reader = _reader(train_data)
    if config.pack_sequences:
        reader = _packed(reader, config)
    eval_reader = None if eval_data is None else _reader(eval_data)
    return reader, eval_reader


def _reader(data):
    """A `ShardReader` of `data` (a shard folder, or a reader already)."""
    return data if isinstance(data, ShardReader) else ShardReader(data)


def _packed(reader, config):
    """`reader`'s shards as packed rows, with the fill factors logged."""
    if not isinstance(reader, PackedShardReader):
        reader = PackedShardReader(
            reader.folder, max_sequences_per_row=config.max_sequences_per_row, seed=config.seed
        )
    elif reader.max_sequences_per_row != config.max_sequences_per_row:
        raise ValueError(
            f"The PackedShardReader packs {reader.max_sequences_per_row} instances per row, "
            f"the config {config.max_sequences_per_row}."
        )
    logger.info(
        "Sequence packing: %d instances in %d rows of %d tokens (at most %d per row); "
        "fill factor %.3f unpacked -> %.3f packed (%.2fx the real tokens per batch).",
        reader.num_instances,
        reader.num_rows,
        reader.sequence_length,
        reader.max_sequences_per_row,
        reader.unpacked_fill_factor,
        reader.fill_factor,
        reader.fill_factor / reader.unpacked_fill_factor,
    )
    return reader


def evaluation_batch_size(config, eval_reader, replicas):
    """`eval_batch_size`, made smaller for small evaluation sets, a multiple of `replicas`."""
    if eval_reader is None:
        return None
    size = min(config.eval_batch_size, eval_reader.num_instances) // replicas * replicas
    if size == 0:
        raise ValueError(
            f"{eval_reader.folder} holds {eval_reader.num_instances} instances, fewer than "
            f"the {replicas} data-parallel replicas."
        )
    return size


def build_pretrainer(init_from, backbone_config, tokenizer):
    """`(pretrainer, tokenizer)`: a `BertPretrainer` continued from the preset
    `init_from` (with its tokenizer unless `tokenizer` is given), or a new one of
    `backbone_config`."""
    from kbert.models import BertBackbone, BertPretrainer

    if init_from is not None:
        pretrainer = BertPretrainer.from_preset(init_from)
        return pretrainer, tokenizer if tokenizer is not None else pretrainer.tokenizer
    backbone = BertBackbone(**backbone_config.to_dict())
    return BertPretrainer(backbone), tokenizer


def dynamic_masking(config, tokenizer):
    """The `DynamicMasking` layer of the run; None without dynamic masking."""
    if not config.dynamic_masking:
        return None
    if tokenizer is None:
        raise ValueError("Dynamic masking needs a tokenizer; the preset has none.")
    from kbert.pretraining.dynamic_masking import DynamicMasking

    # A packed row is masked as one sequence of L tokens, with `max_predictions_per_seq`
    # slots, as an unpacked row of L: special tokens, padding included, are never
    # chosen, so the positions fall inside its instances.
    return DynamicMasking.from_tokenizer(
        tokenizer,
        masked_lm_prob=config.masked_lm_prob,
        max_predictions_per_seq=config.max_predictions_per_seq,
        seed=config.seed,
        name="dynamic_masking",
    )


def pretraining_optimizer(config):
    """The optimiser of the run: AdamW or LAMB on its warm-up/decay schedule."""
    return create_optimizer(
        config.steps,
        learning_rate=config.learning_rate,
        warmup_steps=config.warmup_steps,
        weight_decay=config.weight_decay,
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        clip_norm=config.clip_norm,
        optimizer=config.optimizer,
    )
