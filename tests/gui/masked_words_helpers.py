"""Shared pieces of the "Masked words" tests: a tiny masked-LM preset on the test vocabulary."""

import keras

from fine_tuning_data import TINY_MODEL
from fine_tuning_data import VOCABULARY


def save_masked_lm_preset(folder, seed, max_length=64, **config):
    """Saves a random `BertMaskedLM` of `TINY_MODEL` (updated with `config`) and a tokenizer
    that reads `max_length` tokens as a preset in `folder`; returns its path as a string.

    Seeded with `seed`: module fixtures run before the per-test seed reset of conftest.py.
    """
    from kbert.models import BertBackbone
    from kbert.models import BertMaskedLM
    from kbert.tokenizer import BertTokenizer

    keras.utils.set_random_seed(seed)
    tokenizer = BertTokenizer(list(VOCABULARY), lowercase=True, max_length=max_length)
    backbone = BertBackbone(**dict(TINY_MODEL, vocabulary_size=len(VOCABULARY), **config))
    BertMaskedLM(backbone).save_to_preset(folder, tokenizer=tokenizer)
    return str(folder)
