"""keras-hub's BertTokenizer, both ways: its `tokenizer.json` as kbert tokenizer settings.

Read as plain data (only the arguments kbert knows, checked), written as keras-hub's
`save_to_preset` writes it; the vocabulary is a plain file in the preset's assets.
"""

import os

from kbert.checkpoints.keras_hub_serialization import dtype_policy
from kbert.checkpoints.keras_hub_serialization import is_keras_hub_class
from kbert.checkpoints.keras_hub_serialization import serialized
from kbert.checkpoints.tokenizer_data import SPECIAL_TOKENS
from kbert.checkpoints.tokenizer_data import TOKENIZER_DEFAULTS
from kbert.files.bounded_reader import read_json

TOKENIZER_CONFIG_FILE = "tokenizer.json"
VOCABULARY_FILE = "assets/tokenizer/vocabulary.txt"
# The special tokens keras-hub's BertTokenizer uses (kbert's defaults), by kbert setting.
_SPECIAL_TOKENS = {name: TOKENIZER_DEFAULTS[name] for name in SPECIAL_TOKENS}


def tokenizer_settings(path, folder):
    """The kbert tokenizer settings of a keras-hub `tokenizer.json` (its defaults without one)."""
    # keras-hub's defaults, which differ from kbert's.
    settings = {"lowercase": False, "strip_accents": False}
    if not os.path.lexists(path):
        return settings
    tokenizer_config = read_json(path, "config", folder)
    if not is_keras_hub_class(tokenizer_config, "BertTokenizer"):
        raise ValueError(f"{path} does not describe keras-hub's BertTokenizer.")
    arguments = tokenizer_config.get("config") or {}
    for key, expected in (("split", True), ("suffix_indicator", "##"), ("oov_token", "[UNK]")):
        if arguments.get(key, expected) != expected:
            raise ValueError(
                f"{path}: kbert's tokenizer supports {key}={expected!r} only. "
                f"Received: {key}={arguments[key]!r}"
            )
    for key in ("lowercase", "strip_accents"):
        if key in arguments:
            if not isinstance(arguments[key], bool):
                raise ValueError(
                    f"{path}: `{key}` must be true or false. Received: {arguments[key]!r}"
                )
            settings[key] = arguments[key]
    return settings


def tokenizer_config(tokenizer):
    """keras-hub's `tokenizer.json` for a `TokenizerData` (its vocabulary goes in assets)."""
    lowercase = tokenizer.setting("lowercase")
    strip_accents = tokenizer.setting("strip_accents")
    return serialized(
        "bert_tokenizer",
        "BertTokenizer",
        {
            "name": "bert_tokenizer",
            "trainable": True,
            "dtype": dtype_policy("int32"),
            "config_file": TOKENIZER_CONFIG_FILE,
            "vocabulary": None,
            "sequence_length": None,
            "lowercase": lowercase,
            # kbert's None follows the casing; keras-hub needs the value.
            "strip_accents": lowercase if strip_accents is None else strip_accents,
            "split": True,
            "suffix_indicator": "##",
            "oov_token": "[UNK]",
            "special_tokens": None,
            "special_tokens_in_strings": False,
        },
    )


def check_tokenizer_exportable(tokenizer):
    """Refuses a `TokenizerData` whose special tokens keras-hub's BertTokenizer lacks."""
    unusual = {
        argument: tokenizer.setting(argument)
        for argument, token in _SPECIAL_TOKENS.items()
        if tokenizer.setting(argument) != token
    }
    if unusual:
        raise ValueError(
            "keras-hub's BertTokenizer uses the special tokens "
            f"{sorted(_SPECIAL_TOKENS.values())}; this tokenizer has {unusual}."
        )
