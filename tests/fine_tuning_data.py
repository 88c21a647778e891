"""Small learnable data for fine-tuning tests, and a tiny preset whose vocabulary covers it.

The data are generated from a synthetic vocabulary (see `make_tiny_preset`), so a
2-layer model with hidden size 64 learns each task in seconds:

- classification: "pos" when one of the positive words occurs in the text;
- pair classification: which of the two texts holds the positive word;
- token classification: capitalised names (B-PER, I-PER for a surname) and places
  (B-LOC, one of them split into two word pieces) among filler words, some of which
  split into pieces too;
- question answering: "who is the ROLE of PLACE ?" about a context of such
  sentences in which one has a person as its subject, long enough for several
  windows of 64 tokens.

Rules that need two tokens compared across the input (two texts sharing a key word, a
question word choosing between a name and a place) sat at chance for 600-1000 steps
before this model learned them, too slow for CI; the rules above are learned in one or
two epochs, and still need the segment ids (pairs) and the windows (QA).
"""

import csv

import numpy as np

from kbert.data import ClassificationExample
from kbert.data import GoldAnswer
from kbert.data import QAExample
from kbert.data import TokenClassificationExample

FILLER = (
    "the a cat dog sat ran on mat house tree blue red small big quickly slowly and with near "
    "under over green old new window door table chair road river hill cloud rain sun moon"
).split()
# Not in the vocabulary: each splits into a filler word and "##s".
PLURALS = ("cats", "dogs", "trees", "windows", "doors", "hills")
POSITIVE = ("good", "great", "lovely")
NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy")
SURNAMES = ("Smith", "Jones", "Brown")
# "Amsterdam" is not in the vocabulary: it splits into "amster" and "##dam".
PLACES = ("Paris", "London", "Rome", "Berlin", "Madrid", "Amsterdam")
ROLES = ("king", "mayor", "chef", "judge", "pilot", "baker", "poet", "nurse", "guard", "clerk")
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
VOCABULARY = (
    SPECIAL_TOKENS
    + tuple(FILLER)
    + POSITIVE
    + tuple(word.lower() for word in NAMES + SURNAMES + PLACES if word != "Amsterdam")
    + ROLES
    + ("is", "of", "who", "?", ".", "amster", "##dam", "##s")
)

# hidden 64, 2 layers, 4 heads: small enough for CPU, large enough to learn the tasks.
TINY_MODEL = dict(
    hidden_size=64,
    num_layers=2,
    num_heads=4,
    intermediate_size=128,
    max_positions=64,
    hidden_dropout=0.1,
    attention_dropout=0.1,
)


def make_tiny_preset(folder, **overrides):
    """A randomly initialised tiny backbone with the synthetic vocabulary, as a preset."""
    from kbert.models import BertBackbone
    from kbert.tokenizer import BertTokenizer

    tokenizer = BertTokenizer(list(VOCABULARY), lowercase=True, max_length=64)
    config = dict(TINY_MODEL, vocabulary_size=len(VOCABULARY))
    config.update(overrides)
    BertBackbone(**config).save_to_preset(folder, tokenizer=tokenizer)
    return folder


def _filler(rng, low, high):
    words = list(rng.choice(FILLER, size=int(rng.integers(low, high + 1))))
    for index in range(len(words)):
        if rng.random() < 0.1:
            words[index] = str(rng.choice(PLURALS))
    return words


def _insert(rng, words, word):
    words.insert(int(rng.integers(0, len(words) + 1)), word)


def classification_examples(count, seed):
    """Texts labelled "pos" when a positive word occurs, else "neg" (half each)."""
    rng = np.random.default_rng(seed)
    examples = []
    for index in range(count):
        words = _filler(rng, 3, 10)
        label = "pos" if index % 2 else "neg"
        if label == "pos":
            _insert(rng, words, str(rng.choice(POSITIVE)))
        examples.append(ClassificationExample(" ".join(words), None, label, index + 2))
    return examples


def pair_examples(count, seed):
    """Text pairs labelled by the text ("first" or "second") that holds the positive word.

    Both texts have 2-7 words, so a word's position does not tell its text: the
    model has to read the segment ids.
    """
    rng = np.random.default_rng(seed)
    examples = []
    for index in range(count):
        first, second = _filler(rng, 2, 6), _filler(rng, 2, 6)
        label = "second" if index % 2 else "first"
        _insert(rng, second if label == "second" else first, str(rng.choice(POSITIVE)))
        examples.append(ClassificationExample(" ".join(first), " ".join(second), label, index + 2))
    return examples


def token_classification_examples(count, seed):
    """Sentences with one or two entities (PER with an optional surname, LOC)."""
    rng = np.random.default_rng(seed)
    examples = []
    line = 1
    for _ in range(count):
        tokens = _filler(rng, 3, 9)
        tags = ["O"] * len(tokens)
        for _ in range(int(rng.integers(1, 3))):
            position = int(rng.integers(0, len(tokens) + 1))
            if rng.random() < 0.5:
                entity = [str(rng.choice(NAMES))]
                if rng.random() < 0.4:
                    entity.append(str(rng.choice(SURNAMES)))
                entity_tags = ["B-PER"] + ["I-PER"] * (len(entity) - 1)
            else:
                entity, entity_tags = [str(rng.choice(PLACES))], ["B-LOC"]
            tokens[position:position] = entity
            tags[position:position] = entity_tags
        examples.append(TokenClassificationExample(tokens, tags, line))
        line += len(tokens) + 1
    return examples


def qa_examples(count, seed, min_sentences=4, max_sentences=10):
    """Questions "who is the ROLE of PLACE ?" about contexts of such sentences.

    The other sentences ("the cat is the king of Rome .") have no person in them,
    so the answer is the one name; it sits anywhere in a context of up to about 80 tokens,
    often beyond the first window of 64 tokens.
    """
    rng = np.random.default_rng(seed)
    examples = []
    for index in range(count):
        num_sentences = int(rng.integers(min_sentences, max_sentences + 1))
        asked = int(rng.integers(0, num_sentences))
        context, answer, question = "", None, None
        for sentence in range(num_sentences):
            role, place = rng.choice(ROLES), rng.choice(PLACES)
            if sentence == asked:
                name = str(rng.choice(NAMES))
                answer = GoldAnswer(name, len(context))
                question = f"who is the {role} of {place} ?"
                subject = name
            else:
                subject = " ".join(rng.choice(FILLER, size=2))
            context += f"{subject} is the {role} of {place} . "
        examples.append(QAExample(f"q{index}", "", question, context.strip(), (answer,), False))
    return examples


# --- Acceptance ------------------------------------------------------------------------------


SWAG_COLUMNS = (
    "video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source",
    "ending0", "ending1", "ending2", "ending3", "label",
)


def swag_rows(count, seed):
    """SWAG-format CSV rows: the right one of four endings holds a positive word.

    Each ending is `sent2` (a short start) followed by 2-6 filler words; the label
    cycles through 0-3, so always picking one position scores 25%.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(count):
        context, start = " ".join(_filler(rng, 3, 8)), " ".join(_filler(rng, 1, 2))
        endings = [_filler(rng, 2, 5) for _ in range(4)]
        label = index % 4
        _insert(rng, endings[label], str(rng.choice(POSITIVE)))
        rows.append(
            (f"clip{index}", str(index), f"{context} {start}", context, start, "gold",
             *(" ".join(words) for words in endings), str(label))
        )
    return rows


def write_swag(path, rows):
    """Writes `rows` (as `swag_rows` makes them) under SWAG's header; returns the path as a str."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(SWAG_COLUMNS)
        writer.writerows(rows)
    return str(path)


def multiple_choice_examples(count, seed):
    """`swag_rows` as the reader returns them: `sent2` joined to each ending."""
    from kbert.data import MultipleChoiceExample

    return [
        MultipleChoiceExample(
            row[3], tuple(f"{row[4]} {ending}" for ending in row[6:10]), int(row[10]), index + 2
        )
        for index, row in enumerate(swag_rows(count, seed))
    ]
