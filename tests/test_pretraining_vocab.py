"""WordPiece vocabulary training: BERT's special tokens, ## pieces, casing, presets."""

import numpy as np
import pytest

from kbert.pretraining import VocabularyTrainer
from kbert.tokenizer import BertTokenizer

STEMS = ["walk", "talk", "paint", "teach", "Learn", "Build", "cook", "Sing"]
ENDINGS = ["", "s", "ed", "ing", "er", "ers"]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    """Sentences of stem+ending words, with capitals and an accent."""
    rng = np.random.default_rng(0)
    words = [stem + ending for stem in STEMS for ending in ENDINGS] + ["Café", "the", "a"]
    path = tmp_path_factory.mktemp("vocab") / "corpus.txt"
    lines = [" ".join(rng.choice(words, size=12)) + "." for _ in range(600)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_uncased_vocabulary_starts_with_berts_special_tokens(corpus_file, tmp_path):
    trainer = VocabularyTrainer(vocabulary_size=120, num_unused_tokens=3)
    tokenizer = trainer.train([corpus_file])
    vocabulary = tokenizer.vocabulary
    assert vocabulary[:8] == [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused1]", "[unused2]",
    ]  # fmt: skip
    assert len(vocabulary) <= 120 and len(set(vocabulary)) == len(vocabulary)
    assert any(token.startswith("##") for token in vocabulary)
    assert all(token == token.lower() for token in vocabulary[8:])
    assert "café" not in vocabulary and "cafe" in vocabulary  # accents stripped

    # Every word of the corpus splits into pieces without [UNK].
    text = corpus_file.read_text(encoding="utf-8").splitlines()[0]
    assert "[UNK]" not in tokenizer.tokenize(text)
    assert tokenizer.tokenize("Walkers TEACHING") == ["walkers", "teaching"]
    pieces = tokenizer.tokenize("cookteacher")
    assert pieces[0] == "cook" and all(piece.startswith("##") for piece in pieces[1:])

    # Saved as a preset that BertTokenizer reads back with the same settings.
    tokenizer.save_to_preset(tmp_path / "vocab")
    restored = BertTokenizer.from_preset(tmp_path / "vocab")
    assert restored.vocabulary == vocabulary and restored.lowercase
    assert restored.tokenize("Walkers TEACHING") == ["walkers", "teaching"]
    from_file = BertTokenizer.from_vocabulary_file(tmp_path / "vocab" / "vocab.txt")
    assert from_file.vocabulary == vocabulary


def test_cased_vocabulary_keeps_case_and_accents(corpus_file):
    tokenizer = VocabularyTrainer(vocabulary_size=150, lowercase=False).train(corpus_file)
    assert not tokenizer.lowercase
    assert "Café" in tokenizer.vocabulary
    assert any(token[:1].isupper() for token in tokenizer.vocabulary)
    assert tokenizer.tokenize("Build Café") == ["Build", "Café"]
    assert tokenizer.vocabulary[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_vocabulary_size_is_respected(corpus_file):
    small = VocabularyTrainer(vocabulary_size=60).train([corpus_file])
    large = VocabularyTrainer(vocabulary_size=100).train([corpus_file])
    assert len(small.vocabulary) <= 60 < len(large.vocabulary) <= 100


def test_trainer_rejects_bad_settings(tmp_path):
    with pytest.raises(ValueError, match="vocabulary_size"):
        VocabularyTrainer(vocabulary_size=5)
    with pytest.raises(ValueError, match="vocabulary_size"):
        VocabularyTrainer(vocabulary_size=10, num_unused_tokens=5)
    with pytest.raises(ValueError, match="lowercase"):
        VocabularyTrainer(lowercase="yes")
    with pytest.raises(ValueError, match="not found"):
        VocabularyTrainer().train([tmp_path / "missing.txt"])
    assert VocabularyTrainer(vocabulary_size=64).get_config()["vocabulary_size"] == 64
