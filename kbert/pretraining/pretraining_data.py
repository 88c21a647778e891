"""The whole `create-pretraining-data` pipeline: text files in, shards out."""

import shutil
import tempfile

from kbert.pretraining.document_reader import DocumentReader
from kbert.pretraining.instance_builder import InstanceBuilder
from kbert.pretraining.shard_writer import ShardWriter, vocabulary_fingerprint
from kbert.pretraining.tokenized_corpus import TokenizedCorpus


def create_pretraining_data(
    paths,
    tokenizer,
    output,
    *,
    split_sentences=False,
    document_break=1,
    instances_per_shard=10000,
    progress=None,
    **builder_settings,
):
    """Reads text files and writes pretraining shards, in bounded memory.

    Three streamed stages: `DocumentReader` reads documents; `TokenizedCorpus`
    tokenizes them into a memory-mapped cache (a hidden folder in `output`, deleted
    at the end); `InstanceBuilder` makes the instances and `ShardWriter` writes them.

    Args:
        paths: the input text files.
        tokenizer: a `BertTokenizer`.
        output: the output folder; it must not hold pretraining data yet.
        split_sentences: as `DocumentReader`.
        document_break: as `DocumentReader`.
        instances_per_shard: as `ShardWriter`.
        progress: None, or a callable `progress(stage, count, total)` called as work
            is done: stage "tokenize" counts documents read (total None), stage
            "instances" documents made into instances (total known).
        **builder_settings: `InstanceBuilder` arguments (`max_seq_length`, `seed`, ...).

    Returns:
        The manifest, as a dict.

    Examples:

    >>> manifest = create_pretraining_data(
    ...     ["corpus.txt"], tokenizer, "data/", max_seq_length=128, dupe_factor=5
    ... )
    >>> manifest["num_instances"]
    52341
    """
    reader = DocumentReader(paths, split_sentences=split_sentences, document_break=document_break)
    builder = InstanceBuilder(tokenizer, **builder_settings)
    metadata = {
        "settings": {
            **builder.settings,
            "split_sentences": split_sentences,
            "document_break": document_break,
            "instances_per_shard": instances_per_shard,
        },
        "vocabulary": {
            "fingerprint": vocabulary_fingerprint(tokenizer),
            "size": tokenizer.vocabulary_size,
            "lowercase": tokenizer.lowercase,
        },
    }
    # Created first: it refuses a folder that already holds data, before any work.
    writer = ShardWriter(output, instances_per_shard=instances_per_shard, metadata=metadata)
    cache = tempfile.mkdtemp(prefix=".tokenized-corpus-", dir=writer.folder)
    try:
        with TokenizedCorpus.build(
            reader, tokenizer, cache, progress=_stage(progress, "tokenize", None)
        ) as corpus:
            total = builder.dupe_factor * len(corpus)
            for batch in builder.build(corpus, progress=_stage(progress, "instances", total)):
                writer.write(batch)
        return writer.close({"statistics": builder.statistics})
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def _stage(progress, stage, total):
    if progress is None:
        return None
    return lambda count: progress(stage, count, total)
