"""Hugging Face `transformers` BERT configs, both ways: `config.json` and the tokenizer's.

`config.json` names the architecture (`ARCHITECTURES`: which heads the weights carry,
each one kbert task model) and the sizes (`CONFIG_FIELDS`, one table read in both
directions); `tokenizer_config.json` is written as transformers' `BertTokenizer` reads
it. Google's `bert_config.json` uses the same field names.
"""

import logging
import pathlib

from kbert.architecture.bert_config import BertConfig
from kbert.files.bounded_reader import read_json
from kbert.model_table import BUILT_IN_CLASSES
from kbert.model_table import model_class

logger = logging.getLogger("kbert.checkpoints")

CONFIG_FILE = "config.json"

# Hugging Face architecture -> the kbert model with the same heads (the model table's
# `huggingface_architecture` of kbert's classes, whose weights `huggingface` maps).
# "BertModel" is also what a config without `architectures` means.
ARCHITECTURES = {
    row.huggingface_architecture: row.name
    for row in BUILT_IN_CLASSES
    if row.huggingface_architecture is not None
}
# Hugging Face config field -> BertConfig field. A field missing from config.json takes
# BertConfig's default, which equals transformers' BertConfig default for every one.
CONFIG_FIELDS = {
    "vocab_size": "vocabulary_size",
    "hidden_size": "hidden_size",
    "num_hidden_layers": "num_layers",
    "num_attention_heads": "num_heads",
    "intermediate_size": "intermediate_size",
    "max_position_embeddings": "max_positions",
    "type_vocab_size": "type_vocabulary_size",
    "hidden_dropout_prob": "hidden_dropout",
    "attention_probs_dropout_prob": "attention_dropout",
    "layer_norm_eps": "layer_norm_epsilon",
    "hidden_act": "activation",
    "initializer_range": "initializer_range",
}
# transformers' ACT2FN names -> kbert activations. "gelu_new", "gelu_fast" and
# "gelu_pytorch_tanh" are all the same tanh approximation, written differently.
ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_python": "gelu",
    "gelu_new": "gelu_approximate",
    "gelu_fast": "gelu_approximate",
    "gelu_pytorch_tanh": "gelu_approximate",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
    "tanh": "tanh",
}
# kbert activation -> the name exports write ("gelu_new" for the tanh approximation).
EXPORTED_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_approximate": "gelu_new",
    "relu": "relu",
    "silu": "silu",
    "tanh": "tanh",
}
# The most classes a classification head may have (transformers' largest label sets are
# in the thousands); a config.json asking for 10^9 is refused before any label is made.
MAX_LABELS = 100_000


def read_huggingface_config(path):
    """The parsed `config.json` at `path`, which must be a JSON object."""
    path = pathlib.Path(path)
    hf_config = read_json(path, "config")
    if not isinstance(hf_config, dict):
        raise ValueError(f"{path} must hold a JSON object. Received: {type(hf_config).__name__}")
    return hf_config


def huggingface_architecture(hf_config, source=CONFIG_FILE):
    """The supported architecture named by `hf_config["architectures"]` ("BertModel" if none)."""
    architectures = hf_config.get("architectures") or ["BertModel"]
    if not isinstance(architectures, list) or not all(
        isinstance(name, str) for name in architectures
    ):
        raise ValueError(
            f"{source}: `architectures` must be a list of class names. "
            f"Received: architectures={architectures!r}"
        )
    architecture = architectures[0]
    if architecture not in ARCHITECTURES:
        raise ValueError(
            f"{source}: unsupported architecture {architecture!r}. Supported: "
            f"{sorted(ARCHITECTURES)}. Received: architectures={architectures!r}"
        )
    if len(architectures) > 1:
        logger.warning(
            "%s lists several architectures %s; importing the first, %s.",
            source,
            architectures,
            architecture,
        )
    return architecture


def config_from_huggingface(hf_config, source=CONFIG_FILE):
    """The `BertConfig` for a Hugging Face (or google-research) BERT config dict.

    Raises:
        ValueError: naming the field and its value, for settings kbert does not
            implement (relative position embeddings, decoders, cross-attention, other
            model types or activations).
    """
    model_type = hf_config.get("model_type", "bert")
    if model_type != "bert":
        raise ValueError(
            f"{source}: only BERT checkpoints can be imported. Received: model_type={model_type!r}"
        )
    position_embedding_type = hf_config.get("position_embedding_type", "absolute")
    if position_embedding_type != "absolute":
        raise ValueError(
            f"{source}: kbert implements BERT's learned absolute position embeddings "
            "only (position_embedding_type='absolute'). Received: "
            f"position_embedding_type={position_embedding_type!r}"
        )
    for field in ("is_decoder", "add_cross_attention"):
        if hf_config.get(field, False):
            raise ValueError(
                f"{source}: kbert implements BERT's bidirectional encoder only, without "
                f"causal masking or cross-attention. Received: {field}={hf_config[field]!r}"
            )
    values = {
        kbert_name: hf_config[hf_name]
        for hf_name, kbert_name in CONFIG_FIELDS.items()
        if hf_name in hf_config
    }
    if "activation" in values:
        hidden_act = values["activation"]
        if not isinstance(hidden_act, str) or hidden_act not in ACTIVATIONS:
            raise ValueError(
                f"{source}: unsupported activation. Supported: {sorted(ACTIVATIONS)}. "
                f"Received: hidden_act={hidden_act!r}"
            )
        values["activation"] = ACTIVATIONS[hidden_act]
    try:
        return BertConfig(**values)
    except ValueError as error:
        names = ", ".join(f"{hf}->{kbert}" for hf, kbert in CONFIG_FIELDS.items())
        raise ValueError(f"{source}: {error} (fields map as {names})") from None


def _label_count(hf_config, source):
    """How many classes `id2label` (else `num_labels`, default 2) names, checked."""
    id2label = hf_config.get("id2label")
    if id2label is not None:
        if not isinstance(id2label, dict):
            raise ValueError(f"{source}: `id2label` must be an object. Received: {id2label!r:.80}")
        count, field = len(id2label), "len(id2label)"
    else:
        # transformers 5 omits the default mapping; its default is two classes.
        count, field = hf_config.get("num_labels", 2), "num_labels"
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_LABELS:
        raise ValueError(
            f"{source}: `{field}` must be an integer from 1 to {MAX_LABELS}. "
            f"Received: {field}={count!r:.80}"
        )
    return count


def _classifier_dropout(hf_config, source):
    dropout = hf_config.get("classifier_dropout")
    if dropout is not None and (
        isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1
    ):
        raise ValueError(
            f"{source}: `classifier_dropout` must be null or a number in [0, 1). "
            f"Received: classifier_dropout={dropout!r:.80}"
        )
    return dropout


def _label_names(hf_config, source):
    """Class names in id order from `id2label`, else transformers' default LABEL_i names."""
    count = _label_count(hf_config, source)
    id2label = hf_config.get("id2label")
    if id2label is None:
        return [f"LABEL_{index}" for index in range(count)]
    try:
        by_id = {int(key): str(name) for key, name in id2label.items()}
    except ValueError:
        raise ValueError(
            f"{source}: `id2label` keys must be class ids 0..n-1. Received: {sorted(id2label)}"
        ) from None
    if sorted(by_id) != list(range(len(by_id))):
        raise ValueError(
            f"{source}: `id2label` keys must be class ids 0..n-1. Received: {sorted(by_id)}"
        )
    return [by_id[index] for index in range(len(by_id))]


def task_arguments(class_name, config, hf_config, source):
    """The kbert task arguments a Hugging Face config implies (labels, dropout, head)."""
    row = model_class(class_name)
    if row.has_class_head:
        names = _label_names(hf_config, source)
        # transformers uses classifier_dropout for the head when set, else hidden_dropout_prob.
        dropout = _classifier_dropout(hf_config, source)
        return {
            "num_classes": len(names),
            "label_names": names,
            "dropout": config.hidden_dropout if dropout is None else dropout,
        }
    if class_name == "BertMultipleChoice":
        dropout = _classifier_dropout(hf_config, source)
        return {"dropout": config.hidden_dropout if dropout is None else dropout}
    if "masked_lm_head" in row.head_layer_names:
        # transformers' head transform uses the encoder's activation and epsilon.
        return {
            "head_activation": config.activation,
            "head_layer_norm_epsilon": config.layer_norm_epsilon,
        }
    return {}


# --- Export --------------------------------------------------------------------------------


def huggingface_config(data):
    """The transformers `config.json` dict for `data` (a `CheckpointData`)."""
    inverse = {kbert: hf for hf, kbert in ARCHITECTURES.items()}
    if data.class_name not in inverse:
        raise ValueError(
            f"Cannot export a {data.class_name} to Hugging Face; supported: {sorted(inverse)}"
        )
    values = data.config.to_dict()
    tokenizer = data.tokenizer
    config = {
        "architectures": [inverse[data.class_name]],
        "model_type": "bert",
        **{hf_name: values[kbert_name] for hf_name, kbert_name in CONFIG_FIELDS.items()},
        "hidden_act": EXPORTED_ACTIVATIONS[values["activation"]],
        "position_embedding_type": "absolute",
        "pad_token_id": tokenizer.token_id(tokenizer.setting("pad_token")) if tokenizer else 0,
        "tie_word_embeddings": True,
    }
    if model_class(data.class_name).has_class_head:
        labels = data.task.get("label_names") or [
            f"LABEL_{index}" for index in range(data.num_classes)
        ]
        dropout = data.task.get("dropout")
        config["id2label"] = {str(index): label for index, label in enumerate(labels)}
        config["label2id"] = {label: index for index, label in enumerate(labels)}
        config["classifier_dropout"] = data.config.hidden_dropout if dropout is None else dropout
    if data.class_name == "BertMultipleChoice":
        dropout = data.task.get("dropout")
        config["classifier_dropout"] = data.config.hidden_dropout if dropout is None else dropout
    return config


def huggingface_tokenizer_config(tokenizer):
    """transformers' `tokenizer_config.json` for a `TokenizerData`."""
    settings = tokenizer.all_settings()
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": settings["lowercase"],
        "strip_accents": settings["strip_accents"],
        "tokenize_chinese_chars": settings["tokenize_chinese_chars"],
        "do_basic_tokenize": True,
        "unk_token": settings["unk_token"],
        "sep_token": settings["sep_token"],
        "pad_token": settings["pad_token"],
        "cls_token": settings["cls_token"],
        "mask_token": settings["mask_token"],
        "model_max_length": settings["max_length"],
        "clean_up_tokenization_spaces": False,
    }
