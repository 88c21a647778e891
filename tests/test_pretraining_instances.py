"""Documents in, BERT's sentence-pair instances out: the recipe, its statistics, bounded memory."""

import logging

import numpy as np
import pytest

from kbert.pretraining import (
    DocumentReader,
    InstanceBuilder,
    ShardWriter,
    TokenizedCorpus,
    split_into_sentences,
)
from kbert.pretraining.instance_builder import _truncate_pair
from kbert.tokenizer import BertTokenizer

FILLER = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
MAX_SENTENCES = 25


def marker(document, sentence):
    # One vocabulary token naming the sentence, so instances can be traced back.
    return f"d{document}s{sentence}"


@pytest.fixture(scope="module")
def tokenizer():
    # Documents past the 400th (only the streaming test has them) get [UNK] markers.
    markers = [marker(d, s) for d in range(400) for s in range(MAX_SENTENCES)]
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *FILLER, *markers]
    return BertTokenizer(vocabulary)


def marked_documents(count, seed=0, min_sentences=2):
    """Documents whose sentences start and end with their marker token."""
    rng = np.random.default_rng(seed)
    documents = []
    for document in range(count):
        sentences = []
        for sentence in range(int(rng.integers(min_sentences, MAX_SENTENCES + 1))):
            words = rng.choice(FILLER, size=int(rng.integers(3, 12)))
            name = marker(document, sentence)
            sentences.append(f"{name} {' '.join(words)} {name}.")
        documents.append(sentences)
    return documents


def markers_of(token_ids, tokenizer):
    """`(document, sentence)` of the sentences whose markers are among `token_ids`."""
    found = []
    for token_id in token_ids:
        token = tokenizer.id_to_token(int(token_id))
        if token.startswith("d") and "s" in token:
            document, sentence = token[1:].split("s")
            if (int(document), int(sentence)) not in found[-1:]:
                found.append((int(document), int(sentence)))
    return found


def build_all(builder, corpus):
    batches = list(builder.build(corpus))
    return {name: np.concatenate([batch[name] for batch in batches]) for name in batches[0]}


@pytest.fixture(scope="module")
def corpus(tokenizer, tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    with TokenizedCorpus.build(marked_documents(400), tokenizer, folder) as corpus:
        yield corpus


def test_instances_pair_true_continuations_and_other_documents(tokenizer, corpus):
    length = 64
    builder = InstanceBuilder(
        tokenizer, max_seq_length=length, dupe_factor=1, masking=False, seed=3
    )
    instances = build_all(builder, corpus)
    assert set(instances) == {"token_ids", "segment_ids", "lengths", "nsp_labels"}
    covered = set()
    adjacent = 0
    for token_ids, segment_ids, row_length, label in zip(
        instances["token_ids"],
        instances["segment_ids"],
        instances["lengths"],
        instances["nsp_labels"],
    ):
        # [CLS] A [SEP] B [SEP] [PAD]..., segment 1 on "B [SEP]".
        assert 5 <= row_length <= length
        separators = np.flatnonzero(token_ids == tokenizer.sep_token_id)
        assert token_ids[0] == tokenizer.cls_token_id
        assert len(separators) == 2 and separators[1] == row_length - 1
        assert separators[0] >= 2 and separators[1] - separators[0] >= 2
        expected_segments = np.zeros(length, np.int8)
        expected_segments[separators[0] + 1 : row_length] = 1
        np.testing.assert_array_equal(segment_ids, expected_segments)
        assert (token_ids[row_length:] == tokenizer.pad_token_id).all()

        a = markers_of(token_ids[1 : separators[0]], tokenizer)
        b = markers_of(token_ids[separators[0] + 1 : row_length - 1], tokenizer)
        assert a and b  # sentences are short: truncation never cuts every marker
        assert len({document for document, _ in a}) == 1
        assert len({document for document, _ in b}) == 1
        for segment in (a, b):
            sentences = [sentence for _, sentence in segment]
            assert sentences == list(range(sentences[0], sentences[0] + len(sentences)))
        if label == 0:
            assert a[0][0] == b[0][0] and b[0][1] > a[-1][1]
            adjacent += b[0][1] == a[-1][1] + 1
            covered.update(a + b)
        else:
            assert a[0][0] != b[0][0]
            covered.update(a)
    # B is the very next sentence unless truncation cut a whole sentence.
    assert adjacent >= 0.97 * (instances["nsp_labels"] == 0).sum()
    # Unused sentences are put back: one pass covers (almost) every sentence.
    assert len(covered) >= 0.97 * corpus.num_sentences


def test_next_sentence_labels_and_masks_have_berts_statistics(tokenizer, corpus):
    builder = InstanceBuilder(tokenizer, max_seq_length=64, dupe_factor=4, seed=5)
    instances = build_all(builder, corpus)
    count = len(instances["nsp_labels"])
    assert count >= 5000
    assert abs(instances["nsp_labels"].mean() - 0.5) <= 0.02
    maskable = instances["lengths"].sum() - 3 * count
    assert abs(instances["mask_weights"].sum() / maskable - 0.15) <= 0.01
    assert builder.statistics["instances"] == count
    assert builder.statistics["random_next"] == instances["nsp_labels"].sum()
    assert builder.statistics["documents"] == len(corpus)


def test_same_seed_same_instances_and_short_seq_prob_shortens(tokenizer, corpus):
    first = build_all(InstanceBuilder(tokenizer, max_seq_length=64, dupe_factor=1, seed=9), corpus)
    again = build_all(InstanceBuilder(tokenizer, max_seq_length=64, dupe_factor=1, seed=9), corpus)
    other = build_all(InstanceBuilder(tokenizer, max_seq_length=64, dupe_factor=1, seed=10), corpus)
    for name in first:
        np.testing.assert_array_equal(first[name], again[name])
    assert not np.array_equal(first["token_ids"][:50], other["token_ids"][:50])

    never = build_all(
        InstanceBuilder(tokenizer, max_seq_length=64, dupe_factor=1, short_seq_prob=0.0), corpus
    )
    always = build_all(
        InstanceBuilder(tokenizer, max_seq_length=64, dupe_factor=1, short_seq_prob=1.0), corpus
    )
    assert always["lengths"].mean() < 0.8 * never["lengths"].mean()


def test_whole_word_masking_through_the_builder(tokenizer, corpus):
    builder = InstanceBuilder(
        tokenizer, max_seq_length=64, dupe_factor=1, whole_word_masking=True, seed=1
    )
    instances = build_all(builder, corpus)
    assert "mask_positions" in instances and builder.settings["whole_word_masking"]


def test_truncation_trims_the_longer_segment_first_and_b_on_a_tie():
    rng = np.random.default_rng(0)
    a, b = _truncate_pair(np.arange(10), np.arange(100, 103), 8, rng)
    assert (len(a), len(b)) == (5, 3)
    # Equal lengths: B loses one first, then they alternate, as the original's loop.
    a, b = _truncate_pair(np.arange(5), np.arange(100, 105), 7, rng)
    assert (len(a), len(b)) == (4, 3)
    # Tokens go from the front or the back, never from the middle.
    kept = _truncate_pair(np.arange(40), np.arange(100, 101), 21, rng)[0]
    assert len(kept) == 20 and np.array_equal(kept, np.arange(kept[0], kept[0] + 20))
    fronts = [_truncate_pair(np.arange(40), np.arange(1), 21, rng)[0][0] for _ in range(400)]
    assert 8 <= np.mean(fronts) <= 12  # 20 removals, each from the front half the time


def test_builder_and_writer_stream_in_bounded_memory(tokenizer, tmp_path):
    def documents():
        for index, document in enumerate(marked_documents(800, seed=2)):
            if index == 700:
                # Tokenized documents reach the disk while the input is still read.
                assert (tmp_path / "corpus" / "tokens.bin").stat().st_size > 0
            yield document

    with TokenizedCorpus.build(documents(), tokenizer, tmp_path / "corpus") as corpus:
        assert len(corpus) == 800
        builder = InstanceBuilder(tokenizer, max_seq_length=32, dupe_factor=1, shuffle_buffer=64)
        writer = ShardWriter(tmp_path / "shards", instances_per_shard=50)
        batches = 0
        for batch in builder.build(corpus):
            writer.write(batch)
            batches += 1
            # Each shard is on disk as soon as its instances are there.
            assert (
                len(list((tmp_path / "shards").glob("shard-*.npz"))) == writer.num_instances // 50
            )
        manifest = writer.close({"statistics": builder.statistics})

    # Never more than one buffer (plus one document's instances) in memory.
    most_per_document = 2 * MAX_SENTENCES
    assert builder.peak_buffered_instances <= 64 + most_per_document
    assert writer.peak_buffered_instances <= 50 + 64 + most_per_document
    assert batches >= manifest["num_instances"] // (64 + most_per_document)
    assert len(manifest["shards"]) == -(-manifest["num_instances"] // 50) >= 50


def test_tokenized_corpus_drops_empty_sentences_and_documents(tokenizer, tmp_path):
    documents = [["d0s0 alpha.", "", "d0s1 beta."], [], ["   "], ["d3s0 gamma gamma."]]
    with TokenizedCorpus.build(documents, tokenizer) as corpus:
        folder = corpus.folder
        assert len(corpus) == 2 and corpus.num_sentences == 3
        token_ids, bounds = corpus.document(0)
        expected = tokenizer.encode("d0s0 alpha. d0s1 beta.").token_ids[1:-1]
        np.testing.assert_array_equal(token_ids, expected)
        np.testing.assert_array_equal(bounds, [0, 3, 6])
        assert len(corpus.document(1)[0]) == 4
    assert not folder.exists()  # a temporary corpus deletes itself

    with pytest.raises(ValueError, match="no text"):
        TokenizedCorpus.build([[""], []], tokenizer)
    with pytest.raises(ValueError, match="list of sentence strings"):
        TokenizedCorpus.build(["a bare string"], tokenizer)


def test_one_document_corpus_warns_and_still_builds(tokenizer, caplog):
    with TokenizedCorpus.build(marked_documents(1), tokenizer) as corpus:
        with caplog.at_level(logging.WARNING, logger="kbert.pretraining"):
            instances = build_all(InstanceBuilder(tokenizer, max_seq_length=32), corpus)
    assert "one document" in caplog.text
    assert len(instances["token_ids"]) > 0


def test_builder_rejects_bad_settings(tokenizer):
    with pytest.raises(ValueError, match="max_seq_length"):
        InstanceBuilder(tokenizer, max_seq_length=4)
    with pytest.raises(ValueError, match="short_seq_prob"):
        InstanceBuilder(tokenizer, short_seq_prob=1.5)
    with pytest.raises(ValueError, match="dupe_factor"):
        InstanceBuilder(tokenizer, dupe_factor=0)
    with pytest.raises(ValueError, match="masked_lm_prob"):
        InstanceBuilder(tokenizer, masked_lm_prob=0)


def test_document_reader_layouts(tmp_path):
    one_per_line = tmp_path / "lines.txt"
    one_per_line.write_bytes(
        "\ufeffFirst sentence.\nSecond one.\n \t\nOther document.\r\n\n\n\nThird.\n".encode()
    )
    assert list(DocumentReader(one_per_line)) == [
        ["First sentence.", "Second one."],
        ["Other document."],
        ["Third."],
    ]
    # Two blank lines end a document; one only separates paragraphs.
    assert list(DocumentReader(one_per_line, document_break=2)) == [
        ["First sentence.", "Second one.", "Other document."],
        ["Third."],
    ]
    paragraphs = tmp_path / "book.txt"
    paragraphs.write_text(
        "It is a truth universally\nacknowledged. Mr. Bennet agreed!\n\n"
        '"Indeed?" said she. Mrs. Long\nnodded.\n\n\nChapter two begins.',
        encoding="utf-8",
    )
    reader = DocumentReader([paragraphs, one_per_line], split_sentences=True, document_break=2)
    documents = list(reader)
    assert documents[0] == [
        "It is a truth universally acknowledged.",
        "Mr. Bennet agreed!",
        '"Indeed?" said she.',
        "Mrs. Long nodded.",
    ]
    # The end of a file ends a document; reading again reads the files again.
    assert documents[1] == ["Chapter two begins."]
    assert list(reader) == documents


def test_document_reader_errors_name_the_file_and_line(tmp_path):
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"fine\n\nalso fine\nbad \xff byte\n")
    with pytest.raises(ValueError, match=r"broken.txt:4: .*UTF-8"):
        list(DocumentReader(broken))
    with pytest.raises(ValueError, match="not found"):
        DocumentReader(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="document_break"):
        DocumentReader(broken, document_break=0)


@pytest.mark.parametrize(
    "text, sentences",
    [
        (
            'Mr. Darcy bowed. "Indeed!" said she. It rained.',
            ["Mr. Darcy bowed.", '"Indeed!" said she.', "It rained."],
        ),
        (
            "J. R. R. Tolkien wrote it. Dr. Watson and St. John met in the U.S. today. Fine.",
            [
                "J. R. R. Tolkien wrote it.",
                "Dr. Watson and St. John met in the U.S. today.",
                "Fine.",
            ],
        ),
        (
            'She said "Go." He went... Did he? (Yes.) No. 5 won.',
            ['She said "Go."', "He went...", "Did he?", "(Yes.)", "No. 5 won."],
        ),
        ("  no final stop\nacross lines ", ["no final stop across lines"]),
        ("", []),
    ],
)
def test_sentence_splitter_rules(text, sentences):
    assert split_into_sentences(text) == sentences
