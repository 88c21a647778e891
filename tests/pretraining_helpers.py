"""Pretraining test helpers: a corpus with a strong regularity, its shards, a tiny
config, and per-step losses recovered from Keras' running means."""

import pathlib

import keras
import numpy as np
from model_helpers import TINY

from kbert.architecture.bert_config import BertConfig
from kbert.pretraining import create_pretraining_data
from kbert.pretraining.pretraining_loop import PretrainingLoop
from kbert.tokenizer import BertTokenizer

WORDS = [f"w{index}" for index in range(30)]
SEQUENCE_LENGTH = 16
PREDICTIONS = 3


def make_shards(folder, num_documents=30, dynamic_masking=False, seed=0):
    """A corpus with a strong regularity, its tokenizer and shards made from it.

    Every sentence repeats one word five times and the next sentence uses the next
    word, so a masked word can be read off its neighbours: a model that learns to
    copy drives the masked-LM loss well below ln(30), the loss of guessing.
    """
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocabulary = folder / "vocab.txt"
    vocabulary.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n",
        encoding="utf-8",
    )
    tokenizer = BertTokenizer.from_vocabulary_file(vocabulary)
    rng = np.random.default_rng(seed)
    documents = []
    for _ in range(num_documents):
        start = int(rng.integers(len(WORDS)))
        documents.append(
            "\n".join(
                " ".join([WORDS[(start + sentence) % len(WORDS)]] * 5)
                for sentence in range(6)
            )
        )
    text = folder / "corpus.txt"
    text.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    create_pretraining_data(
        [text],
        tokenizer,
        folder / "shards",
        max_seq_length=SEQUENCE_LENGTH,
        max_predictions_per_seq=PREDICTIONS,
        dupe_factor=3,
        masking=not dynamic_masking,
        seed=seed + 1,
    )
    return folder / "shards", tokenizer


def tiny_config(tokenizer):
    return BertConfig(**dict(TINY, vocabulary_size=tokenizer.vocabulary_size))


class StepLosses:
    """Per-batch losses (`name` of the logs), recovered from Keras' running means."""

    def __init__(self, name="mlm_loss"):
        self.name = name
        self.means = []

    def on_step(self, step, logs):
        self.means.append(logs[self.name])

    @property
    def losses(self):
        previous = [0.0] + self.means[:-1]
        return [
            count * mean - (count - 1) * before
            for count, (mean, before) in enumerate(zip(self.means, previous), start=1)
        ]


def pretrain(
    data, tokenizer, output, config, resume=False, loss_name="mlm_loss", **kwargs
):
    recorder = StepLosses(loss_name)
    loop = PretrainingLoop(output, config, callbacks=[recorder], **kwargs)
    result = loop.run(
        data, backbone_config=tiny_config(tokenizer), tokenizer=tokenizer, resume=resume
    )
    return result, recorder, loop


def trained_weights(loop):
    return [
        keras.ops.convert_to_numpy(variable)
        for variable in loop.model.pretrainer.weights
    ]
