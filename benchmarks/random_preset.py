"""Writes a randomly initialised kbert preset with a made-up WordPiece vocabulary.

It stands in for a trained model where only the shape matters (timing, cold start):
the files are those of a real preset, the predictions are noise.

Usage: python benchmarks/random_preset.py OUTPUT_FOLDER [--size tiny] [--vocabulary-size 8000]
The defaults are the shape of kbert's bundled `demo` model: BERT-tiny (2 layers,
hidden size 128) with an 8000-token vocabulary.
"""

import argparse
import itertools
import string

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

# Real words first, so that example sentences tokenize into whole words.
COMMON_WORDS = (
    "the of and to in a is was for on that with as by at from his her it an were which "
    "are this be has had one their not but or have they who she he first also its new "
    "after more elizabeth darcy wrote read sent received letter sat cat dog mat house "
    "garden book morning evening sister mother father"
).split()


def made_up_vocabulary(vocabulary_size):
    """`vocabulary_size` distinct WordPiece tokens: specials, characters, words, then
    made-up letter pairs and triples (and their `##` continuations) as filler."""
    characters = list(string.ascii_lowercase + string.digits + string.punctuation)
    tokens = list(SPECIAL_TOKENS) + characters + [f"##{c}" for c in string.ascii_lowercase]
    tokens += [word for word in COMMON_WORDS if word not in tokens]
    minimum = len(tokens)
    if vocabulary_size < minimum:
        raise ValueError(
            f"`vocabulary_size` must be at least {minimum} (specials, characters and "
            f"common words). Received: vocabulary_size={vocabulary_size}"
        )
    seen = set(tokens)
    for length in itertools.count(2):
        for letters in itertools.product(string.ascii_lowercase, repeat=length):
            for token in ("".join(letters), "##" + "".join(letters)):
                if len(tokens) == vocabulary_size:
                    return tokens
                if token not in seen:
                    seen.add(token)
                    tokens.append(token)


def write_random_preset(folder, size="tiny", vocabulary_size=8000, seed=0):
    """Saves a random `BertPretrainer` of BERT size `size` with its tokenizer to `folder`."""
    import keras

    from kbert.models import BertBackbone, BertConfig, BertPretrainer
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    keras.utils.set_random_seed(seed)
    config = BertConfig.from_size(size, vocabulary_size=vocabulary_size)
    model = BertPretrainer(BertBackbone.from_config_object(config))
    tokenizer = BertTokenizer(made_up_vocabulary(vocabulary_size))
    model.save_to_preset(folder, tokenizer=tokenizer)
    return folder


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="the preset folder to write")
    parser.add_argument("--size", default="tiny", help="BERT size (default: tiny)")
    parser.add_argument(
        "--vocabulary-size", type=int, default=8000, help="vocabulary tokens (default: 8000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    args = parser.parse_args(argv)
    write_random_preset(args.output, args.size, args.vocabulary_size, args.seed)
    print(f"wrote a random BERT-{args.size} preset to {args.output}")


if __name__ == "__main__":
    main()
