"""BERT's pretraining instances: sentence-pair segments, next-sentence labels, masks."""

import logging

import numpy as np

from kbert.argument_checks import check_bool, check_fraction, check_integer
from kbert.preprocessing.masking import (
    continuation_table,
    mask_tokens,
    special_token_ids_of,
)

logger = logging.getLogger("kbert.pretraining")

# The smallest `max_seq_length`: [CLS] a [SEP] b [SEP] with two tokens of text.
MIN_SEQ_LENGTH = 5


class InstanceBuilder:
    """Turns a `TokenizedCorpus` into pretraining instances, the original recipe.

    As google-research/bert's `create_pretraining_data.py`, for every pass
    (`dupe_factor` passes) and every document: sentences are gathered into a chunk
    until it reaches the target length (`max_seq_length - 3`, or with probability
    `short_seq_prob` a random length from 2 up, drawn once per document and pass); a
    random number of the chunk's leading sentences become segment A. Half of the
    time segment B is the rest of the chunk (label 0, IsNext); otherwise B is taken
    from a random sentence onward in another document (label 1) and the unused
    sentences of the chunk are put back for the next instance. Pairs too long lose
    tokens from the longer segment, each from the front or the back at random. Each
    pass masks afresh.

    Bounded memory instead of the original's everything-in-RAM:
    - the documents stay on disk in the `TokenizedCorpus` and are read one at a time,
      so "random next" segments still come from any document of the corpus;
    - instances are shuffled in a buffer of `shuffle_buffer` instances (plus those of
      the last document read) instead of all at once, and documents are visited in a
      fresh random order every pass, so duplicates of a document land far apart.
      Shuffle the shards again when reading them (`ShardReader`).

    Other deliberate differences:
    - A fair coin decides every label. The original forces a random B on every chunk
      of one sentence, which made about 58% of the labels random on documents of a
      few chunks, and such labels predictable from A. Here a lone sentence that fills
      the target by itself is followed by the next sentences of its document, and a
      document's lone last sentence is paired with the sentence before it; only a
      document of one sentence always gets a random B.
    - The random document is drawn uniformly among the others (the original retries
      10 times), and the masking rule's own differences are listed in
      `kbert.preprocessing.masking`.

    Args:
        tokenizer: the `BertTokenizer` the corpus was tokenized with.
        max_seq_length: the instance length `L`, [CLS] and [SEP]s included.
        short_seq_prob: the probability of a shorter target length.
        dupe_factor: how many passes over the corpus, each with new pairs and masks.
        masked_lm_prob: the fraction of maskable tokens to predict.
        max_predictions_per_seq: `P`, the most predictions per instance.
        whole_word_masking: whether all pieces of a word are masked together.
        masking: False stores no masks, for masking at training time
            (`DynamicMasking`).
        shuffle_buffer: how many instances are shuffled together before they are
            emitted; bounds memory.
        seed: the seed of the `numpy.random.Generator` behind every choice; the same
            seed and corpus give the same instances.

    Examples:

    >>> builder = InstanceBuilder(tokenizer, max_seq_length=128, dupe_factor=5)
    >>> with TokenizedCorpus.build(DocumentReader("corpus.txt"), tokenizer) as corpus:
    ...     for batch in builder.build(corpus):
    ...         writer.write(batch)
    """

    def __init__(
        self,
        tokenizer,
        max_seq_length=128,
        short_seq_prob=0.1,
        dupe_factor=10,
        masked_lm_prob=0.15,
        max_predictions_per_seq=20,
        whole_word_masking=False,
        masking=True,
        shuffle_buffer=10000,
        seed=12345,
    ):
        check_integer("max_seq_length", max_seq_length, MIN_SEQ_LENGTH)
        check_integer("dupe_factor", dupe_factor, 1)
        check_integer("max_predictions_per_seq", max_predictions_per_seq, 1)
        check_integer("shuffle_buffer", shuffle_buffer, 1)
        check_integer("seed", seed, 0)
        check_fraction("short_seq_prob", short_seq_prob, allow_zero=True)
        check_fraction("masked_lm_prob", masked_lm_prob, allow_zero=False)
        check_bool("whole_word_masking", whole_word_masking)
        check_bool("masking", masking)
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.short_seq_prob = short_seq_prob
        self.dupe_factor = dupe_factor
        self.masked_lm_prob = masked_lm_prob
        self.max_predictions_per_seq = max_predictions_per_seq
        self.whole_word_masking = whole_word_masking
        self.masking = masking
        self.shuffle_buffer = shuffle_buffer
        self.seed = seed
        self._special_token_ids = special_token_ids_of(tokenizer)
        self._continuation = continuation_table(tokenizer) if whole_word_masking else None
        self.statistics = {}
        self.peak_buffered_instances = 0

    @property
    def settings(self):
        """The settings that shape the instances, for the data set's manifest."""
        return {
            "max_seq_length": self.max_seq_length,
            "short_seq_prob": self.short_seq_prob,
            "dupe_factor": self.dupe_factor,
            "masked_lm_prob": self.masked_lm_prob,
            "max_predictions_per_seq": self.max_predictions_per_seq,
            "whole_word_masking": self.whole_word_masking,
            "masking": self.masking,
            "shuffle_buffer": self.shuffle_buffer,
            "seed": self.seed,
        }

    def build(self, corpus, progress=None):
        """Yields the instances in shuffled batches of about `shuffle_buffer`.

        Args:
            corpus: a `TokenizedCorpus` made with this builder's tokenizer.
            progress: None, or a callable taking the number of documents just done
                (`dupe_factor * len(corpus)` in all).

        Yields:
            Dicts of numpy arrays, `N` instances each: `token_ids` `(N, L)` int32
            (masked, padded with `[PAD]`), `segment_ids` `(N, L)` int8, `lengths`
            `(N,)` int32 (tokens before the padding), `nsp_labels` `(N,)` int32 (0:
            B follows A, 1: B is random) and, when masking, `mask_positions`,
            `mask_ids` `(N, P)` int32 and `mask_weights` `(N, P)` float32.
            `self.statistics` holds the counts once the generator is exhausted.
        """
        rng = np.random.default_rng(self.seed)
        if len(corpus) == 1:
            logger.warning(
                "The corpus has one document, so 'random next' segments come from the "
                "same document; separate documents with a blank line."
            )
        statistics = {
            "documents": len(corpus),
            "instances": 0,
            "random_next": 0,
            "tokens": 0,
            "masked_tokens": 0,
        }
        self.statistics = statistics
        self.peak_buffered_instances = 0
        buffer = []
        for _ in range(self.dupe_factor):
            for document_index in rng.permutation(len(corpus)):
                buffer.extend(self._document_instances(corpus, int(document_index), rng))
                self.peak_buffered_instances = max(self.peak_buffered_instances, len(buffer))
                if progress is not None:
                    progress(1)
                if len(buffer) >= self.shuffle_buffer:
                    yield self._emit(buffer, rng, statistics)
                    buffer = []
        if buffer:
            yield self._emit(buffer, rng, statistics)

    def _document_instances(self, corpus, document_index, rng):
        """The `(tokens_a, tokens_b, is_random_next)` of one pass over one document."""
        token_ids, bounds = corpus.document(document_index)
        num_sentences = len(bounds) - 1
        max_num_tokens = self.max_seq_length - 3
        target_length = max_num_tokens
        if rng.random() < self.short_seq_prob:
            target_length = int(rng.integers(2, max_num_tokens, endpoint=True))

        instances = []
        chunk_start = 0  # the first sentence of the current chunk
        sentence = 0
        while sentence < num_sentences:
            chunk_length = bounds[sentence + 1] - bounds[chunk_start]
            if sentence == num_sentences - 1 or chunk_length >= target_length:
                chunk_sentences = sentence + 1 - chunk_start
                a_sentences = 1
                if chunk_sentences >= 2:
                    a_sentences = int(rng.integers(1, chunk_sentences))
                a_end = bounds[chunk_start + a_sentences]
                tokens_a = token_ids[bounds[chunk_start] : a_end]
                # A fair coin for every instance; the original forces "random" on a
                # chunk of one sentence, which made about 58% of the labels random on
                # documents of a few chunks, and the label predictable from A.
                is_random_next = num_sentences == 1 or rng.random() < 0.5
                if is_random_next:
                    other = self._other_document(corpus, document_index, rng)
                    other_ids, other_bounds = corpus.document(other)
                    start = int(rng.integers(len(other_bounds) - 1))
                    tokens_b, _ = _segment(
                        other_ids, other_bounds, start, target_length - len(tokens_a)
                    )
                    # Put the chunk's unused sentences back for the next instance.
                    sentence = chunk_start + a_sentences - 1
                elif chunk_sentences >= 2:
                    tokens_b = token_ids[a_end : bounds[sentence + 1]]
                elif sentence + 1 < num_sentences:
                    # One sentence reaching the target alone: B is what follows it.
                    tokens_b, sentence = _segment(
                        token_ids, bounds, sentence + 1, target_length - len(tokens_a)
                    )
                else:
                    # The document's last sentence alone: pair it with the one before.
                    tokens_a = token_ids[bounds[sentence - 1] : bounds[sentence]]
                    tokens_b = token_ids[bounds[sentence] : bounds[sentence + 1]]
                tokens_a, tokens_b = _truncate_pair(tokens_a, tokens_b, max_num_tokens, rng)
                instances.append((tokens_a, tokens_b, is_random_next))
                chunk_start = sentence + 1
            sentence += 1
        return instances

    @staticmethod
    def _other_document(corpus, document_index, rng):
        """A document drawn uniformly from the others (itself if it is the only one)."""
        if len(corpus) == 1:
            return document_index
        other = int(rng.integers(len(corpus) - 1))
        return other + 1 if other >= document_index else other

    def _emit(self, instances, rng, statistics):
        """Shuffles, segment-packs and masks the buffered instances."""
        order = rng.permutation(len(instances))
        batch = self._pack_segments([instances[index] for index in order])
        statistics["instances"] += len(instances)
        statistics["random_next"] += int(batch["nsp_labels"].sum())
        statistics["tokens"] += int(batch["lengths"].sum())
        if not self.masking:
            return batch
        word_continuation = None
        if self._continuation is not None:
            word_continuation = self._continuation[batch["token_ids"]]
        masked = mask_tokens(
            batch["token_ids"],
            rng,
            mask_token_id=self.tokenizer.mask_token_id,
            special_token_ids=self._special_token_ids,
            vocabulary_size=self.tokenizer.vocabulary_size,
            masked_lm_prob=self.masked_lm_prob,
            max_predictions_per_seq=self.max_predictions_per_seq,
            word_continuation=word_continuation,
        )
        statistics["masked_tokens"] += int(masked["mask_weights"].sum())
        batch.update(masked)
        return batch

    def _pack_segments(self, instances):
        """`[CLS] a [SEP] b [SEP]` rows padded with `[PAD]` to `max_seq_length`."""
        count = len(instances)
        token_ids = np.full((count, self.max_seq_length), self.tokenizer.pad_token_id, np.int32)
        segment_ids = np.zeros((count, self.max_seq_length), np.int8)
        lengths = np.zeros(count, np.int32)
        nsp_labels = np.zeros(count, np.int32)
        cls_token_id = self.tokenizer.cls_token_id
        sep_token_id = self.tokenizer.sep_token_id
        for row, (tokens_a, tokens_b, is_random_next) in enumerate(instances):
            b_start = len(tokens_a) + 2
            end = b_start + len(tokens_b) + 1
            token_ids[row, 0] = cls_token_id
            token_ids[row, 1 : b_start - 1] = tokens_a
            token_ids[row, b_start - 1] = sep_token_id
            token_ids[row, b_start : end - 1] = tokens_b
            token_ids[row, end - 1] = sep_token_id
            segment_ids[row, b_start:end] = 1
            lengths[row] = end
            nsp_labels[row] = int(is_random_next)
        return {
            "token_ids": token_ids,
            "segment_ids": segment_ids,
            "lengths": lengths,
            "nsp_labels": nsp_labels,
        }


def _segment(token_ids, bounds, start, target_length):
    """Sentences from `start` on until they reach `target_length` tokens (at least one).

    Returns:
        The tokens and the index of the last sentence taken.
    """
    lengths_from_start = bounds[start + 1 :] - bounds[start]
    last = min(int(np.searchsorted(lengths_from_start, target_length)), len(lengths_from_start) - 1)
    return token_ids[bounds[start] : bounds[start] + lengths_from_start[last]], start + last


def _truncate_pair(tokens_a, tokens_b, max_num_tokens, rng):
    """Shortens the longer segment until the pair fits, as the original.

    The original removes one token at a time from the longer segment (B on a tie),
    from the front or the back with equal odds. The counts are the same computed at
    once, and how many of a segment's removals hit the front is binomial.
    """
    length_a, length_b = len(tokens_a), len(tokens_b)
    excess = length_a + length_b - max_num_tokens
    if excess <= 0:
        return tokens_a, tokens_b
    # First the longer segment down to the other's length, then alternately, B first.
    head_start = min(abs(length_a - length_b), excess)
    remove_a = head_start if length_a > length_b else 0
    remove_b = head_start if length_b > length_a else 0
    remaining = excess - head_start
    remove_b += (remaining + 1) // 2
    remove_a += remaining // 2
    return _trim(tokens_a, remove_a, rng), _trim(tokens_b, remove_b, rng)


def _trim(tokens, count, rng):
    if count == 0:
        return tokens
    front = int(rng.binomial(count, 0.5))
    return tokens[front : len(tokens) - (count - front)]
