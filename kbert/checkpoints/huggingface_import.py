"""Imports Hugging Face `transformers` BERT folders: `config.json`, weights, vocabulary.

A folder written by `save_pretrained` holds `config.json`, the weights as
`model.safetensors` (or, from older versions, `pytorch_model.bin`; either may be split into
shards listed in a `.index.json`), and the tokenizer as `vocab.txt` or `tokenizer.json`
with `tokenizer_config.json`. The `architectures` entry of `config.json` says which heads
the weights carry; each maps to one kbert task model.

Layouts: PyTorch `Linear` weights are (out, in) and Keras `Dense` kernels (in, out), so
every linear weight is transposed. Hugging Face keeps query, key and value as three
linears; kbert fuses them into one (H, 3H) kernel, concatenated in that order.

Loading never runs code from the folder: safetensors are read as plain arrays and PyTorch
pickles only with `torch.load(..., weights_only=True)` (see `kbert.checkpoints.safe_loading`);
safetensors headers are validated before any tensor is read. JSON files go through
`kbert.files.bounded_reader`. No model is built before the config is checked against the
weights: the file must hold as many numbers as the config's model has
(`BertConfig.check_weights_hold`) and a classifier's rows as many as its labels.
"""

import logging
import pathlib
import re

import numpy as np

from kbert.checkpoints.safe_loading import check_safetensors_header
from kbert.checkpoints.safe_loading import load_pytorch_state
from kbert.files.bounded_reader import read_json

# kbert.models (and so Keras and the backend) is imported inside the functions that build
# models, so that detecting a folder's format, and `kbert --help`, stay instant.

logger = logging.getLogger("kbert.checkpoints")

CONFIG_FILE = "config.json"
SAFETENSORS_FILE = "model.safetensors"
SAFETENSORS_INDEX_FILE = "model.safetensors.index.json"
PYTORCH_FILE = "pytorch_model.bin"
PYTORCH_INDEX_FILE = "pytorch_model.bin.index.json"
# In order of preference: safetensors cannot carry code, pickles can (we refuse it anyway).
WEIGHT_FILES = (SAFETENSORS_FILE, SAFETENSORS_INDEX_FILE, PYTORCH_FILE, PYTORCH_INDEX_FILE)
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json")

# Hugging Face architecture -> the kbert model (in kbert.models) with the same heads.
# "BertModel" is also what a config without `architectures` means.
ARCHITECTURES = {
    "BertModel": "BertBackbone",
    "BertForPreTraining": "BertPretrainer",
    "BertForMaskedLM": "BertMaskedLM",
    "BertForSequenceClassification": "BertClassifier",
    "BertForTokenClassification": "BertTokenClassifier",
    "BertForQuestionAnswering": "BertQuestionAnswerer",
}
# These build their inner BertModel with add_pooling_layer=False, so their files have no
# pooler; the kbert pooler then keeps its random initialisation (the task never uses it).
_ARCHITECTURES_WITHOUT_POOLER = (
    "BertForMaskedLM",
    "BertForTokenClassification",
    "BertForQuestionAnswering",
)
_ARCHITECTURES_WITH_MASKED_LM = ("BertForPreTraining", "BertForMaskedLM")
# Architecture -> (kbert head layer, Hugging Face Linear) for the one-Dense heads.
_LINEAR_HEADS = {
    "BertForSequenceClassification": ("classifier_head", "classifier"),
    "BertForTokenClassification": ("token_classifier_head", "classifier"),
    "BertForQuestionAnswering": ("span_head", "qa_outputs"),
}

# The most classes a classification head may have (transformers' largest label sets are
# in the thousands); a config.json asking for 10^9 is refused before any label is made.
MAX_LABELS = 100_000

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

_DECODER_WEIGHT = "cls.predictions.decoder.weight"
_DECODER_BIAS = "cls.predictions.decoder.bias"
_WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
_BACKBONE_PREFIX = "bert."
# Tensors that are in some files but carry nothing to import: the `position_ids` buffer
# (0..P-1) of older versions, and the masked-LM decoder, which is tied to the word
# embeddings (its bias is `cls.predictions.bias` again). Ties are verified, not assumed.
_IGNORABLE = re.compile(r"(^|\.)position_ids$|^cls\.predictions\.decoder\.(weight|bias)$")
# Checkpoints converted from TensorFlow by old transformers versions name LayerNorm
# parameters gamma/beta; transformers renames them on load and so do we.
_LEGACY_LAYER_NORM = {"LayerNorm.gamma": "LayerNorm.weight", "LayerNorm.beta": "LayerNorm.bias"}


def is_huggingface_folder(folder):
    """Whether `folder` has a `config.json` and a Hugging Face weights file."""
    folder = pathlib.Path(folder)
    return (folder / CONFIG_FILE).is_file() and any(
        (folder / name).is_file() for name in WEIGHT_FILES
    )


def load_huggingface(folder):
    """Builds the kbert model equivalent to a Hugging Face BERT folder.

    Every weight is checked against the shape the config implies before any is assigned,
    so a bad file raises before a half-loaded model exists.

    Args:
        folder: a folder written by transformers' `save_pretrained` (or laid out alike).

    Returns:
        `(model, tokenizer)`: the model is a `BertBackbone` or the task model matching
        the folder's architecture (`BertPretrainer`, `BertMaskedLM`, `BertClassifier`,
        `BertTokenClassifier`, `BertQuestionAnswerer`); the tokenizer is a
        `BertTokenizer`, or None when the folder has no vocabulary. Task models also
        carry the tokenizer as `.tokenizer`.

    Raises:
        ValueError: on an unsupported architecture or setting, or a missing or
            mis-shaped weight (naming it and both shapes).
        ImportError: for `pytorch_model.bin` when PyTorch is not installed.

    Example:

    >>> model, tokenizer = load_huggingface("downloads/bert-base-uncased")
    >>> type(model).__name__
    'BertPretrainer'
    """
    folder = pathlib.Path(folder).expanduser()
    config_path = folder / CONFIG_FILE
    hf_config = read_huggingface_config(config_path)
    architecture = huggingface_architecture(hf_config, config_path)
    config = config_from_huggingface(hf_config, config_path)
    weights = _NamedWeights(read_huggingface_weights(folder), folder)
    _check_sizes(architecture, config, hf_config, weights, config_path)

    model = _build_model(architecture, config, hf_config, config_path)
    backbone = getattr(model, "backbone", model)
    plan = _backbone_plan(backbone, weights, architecture)
    plan += _head_plan(model, architecture)
    if architecture in _ARCHITECTURES_WITH_MASKED_LM:
        _check_tied_decoder(weights, hf_config)
    _assign(plan, weights)
    weights.warn_unused()

    tokenizer = load_huggingface_tokenizer(folder, config)
    if model is not backbone:
        model.tokenizer = tokenizer
    logger.info(
        "Loaded %s from %s as %s (%d parameters).",
        architecture,
        folder,
        type(model).__name__,
        model.count_params(),
    )
    return model, tokenizer


# --- Config ------------------------------------------------------------------------------


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
    """The `BertConfig` for a Hugging Face BERT config dict.

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
    from kbert.architecture.bert_config import BertConfig

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
            raise ValueError(
                f"{source}: `id2label` must be an object. Received: {id2label!r:.80}"
            )
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


def _check_sizes(architecture, config, hf_config, weights, source):
    """Refuses, before a model is built, a config larger than what its weights hold."""
    config.check_weights_hold(
        sum(int(array.size) for array in weights.arrays.values()), source, include_pooler=False
    )
    if ARCHITECTURES[architecture] in ("BertClassifier", "BertTokenClassifier"):
        count = _label_count(hf_config, source)
        _classifier_dropout(hf_config, source)
        classifier = weights.arrays.get("classifier.weight")
        if classifier is not None and (classifier.ndim != 2 or classifier.shape[0] != count):
            raise ValueError(
                f"{source} names {count} labels but the checkpoint's "
                f"{weights.display_name('classifier.weight')!r} has shape "
                f"{tuple(classifier.shape)}, expected ({count}, {config.hidden_size})."
            )


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


def _build_model(architecture, config, hf_config, source):
    from kbert import models

    backbone = models.BertBackbone.from_config_object(config)
    class_name = ARCHITECTURES[architecture]
    if class_name == "BertBackbone":
        return backbone
    task_class = getattr(models, class_name)
    if class_name in ("BertClassifier", "BertTokenClassifier"):
        # transformers uses classifier_dropout for the head when set, else hidden_dropout_prob.
        return task_class(
            backbone,
            label_names=_label_names(hf_config, source),
            dropout=_classifier_dropout(hf_config, source),
        )
    return task_class(backbone)


# --- Weights -----------------------------------------------------------------------------


def read_huggingface_weights(folder):
    """All tensors of a Hugging Face folder as float32 (or integer) NumPy arrays, by name.

    Reads `model.safetensors`, else `pytorch_model.bin`, or the shards listed in the
    matching `.index.json`.
    """
    folder = pathlib.Path(folder)
    if (folder / SAFETENSORS_FILE).is_file():
        files, reader = [folder / SAFETENSORS_FILE], _read_safetensors
    elif (folder / SAFETENSORS_INDEX_FILE).is_file():
        files, reader = _shard_files(folder / SAFETENSORS_INDEX_FILE), _read_safetensors
    elif (folder / PYTORCH_FILE).is_file():
        files, reader = [folder / PYTORCH_FILE], _read_pytorch
    elif (folder / PYTORCH_INDEX_FILE).is_file():
        files, reader = _shard_files(folder / PYTORCH_INDEX_FILE), _read_pytorch
    else:
        raise ValueError(f"{folder} has no weights file; looked for {list(WEIGHT_FILES)}.")
    weights = {}
    for path in files:
        for name, value in reader(path).items():
            if name in weights:
                raise ValueError(f"Tensor {name!r} appears in more than one shard ({path}).")
            weights[name] = _to_float32(value)
    return weights


def _to_float32(value):
    # Half-precision checkpoints are widened: the model is built in float32.
    if np.issubdtype(value.dtype, np.floating) and value.dtype != np.float32:
        return value.astype(np.float32)
    return value


def _shard_files(index_path):
    index = read_huggingface_config(index_path)
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise ValueError(f"{index_path} has no `weight_map` of tensor name -> shard file.")
    files = []
    for name in sorted(set(weight_map.values())):
        path = index_path.parent / name
        # A shard name is a plain file name beside the index, never a path elsewhere.
        if pathlib.Path(name).name != name or not path.is_file():
            raise ValueError(
                f"{index_path} lists shard {name!r}, which is not in {index_path.parent}."
            )
        files.append(path)
    return files


def _read_safetensors(path):
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    # The header is validated first, so a hostile one cannot make the reader allocate
    # more than the file holds.
    check_safetensors_header(path)
    try:
        return load_file(path)
    except TypeError as error:
        # NumPy has no bfloat16; such files are read through PyTorch and widened.
        if "bfloat16" not in str(error):
            raise
        _import_torch(f"{path} stores bfloat16 tensors, which NumPy cannot hold")
        from safetensors.torch import load_file as load_torch_file

        return {name: tensor.float().numpy() for name, tensor in load_torch_file(path).items()}
    except SafetensorError as error:
        raise ValueError(f"{path} is not a readable safetensors file: {error}") from None


def _read_pytorch(path):
    torch = _import_torch(f"{path} is a PyTorch file")
    # weights_only=True: the unpickler accepts tensors and plain containers only, so a
    # malicious file is refused instead of running code.
    state = load_pytorch_state(path, torch)
    if not isinstance(state, dict):
        raise ValueError(
            f"{path} must hold a dict of tensor name -> tensor. Received: {type(state).__name__}"
        )
    arrays = {}
    for name, tensor in state.items():
        if not isinstance(tensor, torch.Tensor):
            raise ValueError(f"{path}: entry {name!r} is a {type(tensor).__name__}, not a tensor.")
        tensor = tensor.detach().cpu()
        if tensor.is_floating_point():
            tensor = tensor.float()
        arrays[name] = tensor.numpy()
    return arrays


def _import_torch(reason):
    try:
        import torch
    except ImportError:
        raise ImportError(
            f"{reason}; reading it needs PyTorch, which is not installed. Install it "
            "(pip install torch), or save the checkpoint as float32 model.safetensors."
        ) from None
    return torch


class _NamedWeights:
    """The file's tensors under canonical names, remembering which ones were used.

    Canonical names drop the `bert.` prefix (task models save the encoder under it, a
    bare `BertModel` does not) and rename legacy LayerNorm gamma/beta.
    """

    def __init__(self, raw_weights, folder):
        self.folder = folder
        self.arrays = {}
        self.file_names = {}
        for file_name, value in raw_weights.items():
            name = file_name.removeprefix(_BACKBONE_PREFIX)
            for legacy, current in _LEGACY_LAYER_NORM.items():
                if name.endswith(legacy):
                    name = name[: -len(legacy)] + current
            if name in self.arrays:
                raise ValueError(
                    f"{folder}: tensors {self.file_names[name]!r} and {file_name!r} "
                    "are the same weight under two names."
                )
            self.arrays[name] = value
            self.file_names[name] = file_name
        self.prefixed = any(name.startswith(_BACKBONE_PREFIX) for name in raw_weights)
        self.used = set()

    def __contains__(self, name):
        return name in self.arrays

    def get(self, name):
        self.used.add(name)
        return self.arrays[name]

    def display_name(self, name):
        """How `name` is (or would be) spelled in this file."""
        if name in self.file_names:
            return self.file_names[name]
        is_backbone = name.split(".")[0] in ("embeddings", "encoder", "pooler")
        return _BACKBONE_PREFIX + name if is_backbone and self.prefixed else name

    def warn_unused(self):
        unused = sorted(
            self.file_names[name]
            for name in self.arrays
            if name not in self.used and not _IGNORABLE.search(name)
        )
        if unused:
            logger.warning(
                "%s: %d tensor(s) in the checkpoint were not imported: %s",
                self.folder,
                len(unused),
                unused,
            )


class _Assignment:
    """One kbert variable and the Hugging Face tensors it is built from.

    `sources` are concatenated along the last (output) axis; with `transpose`, each is a
    PyTorch (out, in) linear weight turned into a Keras (in, out) kernel first.
    """

    def __init__(self, variable, sources, transpose=False):
        self.variable = variable
        self.sources = tuple(sources)
        self.transpose = transpose

    def expected_source_shape(self):
        shape = list(self.variable.shape)
        shape[-1] //= len(self.sources)
        return tuple(reversed(shape)) if self.transpose else tuple(shape)

    def value(self, arrays):
        parts = [array.T if self.transpose else array for array in arrays]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)


def _linear(layer, name):
    """Assignments for a Dense layer from the PyTorch Linear `name`."""
    return [
        _Assignment(layer.kernel, [f"{name}.weight"], transpose=True),
        _Assignment(layer.bias, [f"{name}.bias"]),
    ]


def _layer_norm(layer, name):
    return [
        _Assignment(layer.gamma, [f"{name}.weight"]),
        _Assignment(layer.beta, [f"{name}.bias"]),
    ]


def _backbone_plan(backbone, weights, architecture):
    embeddings = backbone.embeddings
    plan = [
        _Assignment(embeddings.token_embedding.embeddings, [_WORD_EMBEDDINGS]),
        _Assignment(embeddings.position_embeddings, ["embeddings.position_embeddings.weight"]),
        _Assignment(
            embeddings.segment_embedding.embeddings, ["embeddings.token_type_embeddings.weight"]
        ),
        *_layer_norm(embeddings.layer_norm, "embeddings.LayerNorm"),
    ]
    for index, block in enumerate(backbone.encoder_blocks):
        prefix = f"encoder.layer.{index}."
        attention = block.self_attention
        projections = [f"{prefix}attention.self.{part}" for part in ("query", "key", "value")]
        plan += [
            _Assignment(
                attention.query_key_value.kernel,
                [f"{name}.weight" for name in projections],
                transpose=True,
            ),
            _Assignment(attention.query_key_value.bias, [f"{name}.bias" for name in projections]),
            *_linear(attention.output_projection, f"{prefix}attention.output.dense"),
            *_layer_norm(block.attention_layer_norm, f"{prefix}attention.output.LayerNorm"),
            *_linear(block.intermediate_dense, f"{prefix}intermediate.dense"),
            *_linear(block.output_dense, f"{prefix}output.dense"),
            *_layer_norm(block.output_layer_norm, f"{prefix}output.LayerNorm"),
        ]
    has_pooler = any(name.startswith("pooler.") for name in weights.arrays)
    if has_pooler:
        plan += _linear(backbone.pooler.dense, "pooler.dense")
    elif architecture in _ARCHITECTURES_WITHOUT_POOLER:
        logger.info(
            "%s: %s checkpoints have no pooler; kbert's (unused by this task) keeps its "
            "random initialisation.",
            weights.folder,
            architecture,
        )
    elif architecture == "BertModel":
        logger.warning(
            "%s has no pooler weights (saved with add_pooling_layer=False?): the backbone's "
            "`pooled_output` is randomly initialised.",
            weights.folder,
        )
    else:
        # The task's outputs depend on the pooler: report it as missing.
        plan += _linear(backbone.pooler.dense, "pooler.dense")
    return plan


def _head_plan(model, architecture):
    if architecture in _ARCHITECTURES_WITH_MASKED_LM:
        head = model.get_layer("masked_lm_head")
        plan = [
            *_linear(head.transform_dense, "cls.predictions.transform.dense"),
            *_layer_norm(head.layer_norm, "cls.predictions.transform.LayerNorm"),
            _Assignment(head.output_bias, ["cls.predictions.bias"]),
        ]
        if architecture == "BertForPreTraining":
            plan += _linear(model.get_layer("next_sentence_head"), "cls.seq_relationship")
        return plan
    if architecture in _LINEAR_HEADS:
        layer_name, hf_name = _LINEAR_HEADS[architecture]
        return _linear(model.get_layer(layer_name), hf_name)
    return []


def _check_tied_decoder(weights, hf_config):
    """Makes sure the masked-LM decoder is the word embedding, as kbert's head assumes."""
    if _DECODER_WEIGHT in weights:
        decoder = weights.arrays[_DECODER_WEIGHT]
        if _WORD_EMBEDDINGS not in weights:
            # Tied tensors are stored once; some writers keep the decoder's name.
            weights.arrays[_WORD_EMBEDDINGS] = decoder
            weights.file_names[_WORD_EMBEDDINGS] = weights.file_names[_DECODER_WEIGHT]
        elif not np.array_equal(decoder, weights.arrays[_WORD_EMBEDDINGS]):
            raise ValueError(
                f"{weights.folder}: {weights.display_name(_DECODER_WEIGHT)!r} differs from "
                f"the word embeddings {weights.display_name(_WORD_EMBEDDINGS)!r}. kbert's "
                "masked-LM head is tied to the word embeddings and cannot hold a separate "
                "output embedding."
            )
    elif hf_config.get("tie_word_embeddings", True) is False:
        raise ValueError(
            f"{weights.folder}: config.json sets tie_word_embeddings=false but the "
            f"checkpoint has no {_DECODER_WEIGHT!r}; kbert's masked-LM head is tied to "
            "the word embeddings."
        )
    if "cls.predictions.bias" not in weights and _DECODER_BIAS in weights:
        weights.arrays["cls.predictions.bias"] = weights.arrays[_DECODER_BIAS]
        weights.file_names["cls.predictions.bias"] = weights.file_names[_DECODER_BIAS]


def _assign(plan, weights):
    """Checks every source tensor of `plan`, then assigns all variables (or none)."""
    problems = []
    for assignment in plan:
        expected = assignment.expected_source_shape()
        for name in assignment.sources:
            if name not in weights:
                problems.append(
                    f"missing weight {weights.display_name(name)!r} (for kbert variable "
                    f"{assignment.variable.path!r}, expected shape {expected})"
                )
                continue
            found = tuple(weights.arrays[name].shape)
            if found != expected:
                problems.append(
                    f"weight {weights.display_name(name)!r} has shape {found}, expected "
                    f"{expected} (for kbert variable {assignment.variable.path!r})"
                )
    if problems:
        raise ValueError(
            f"Cannot import {weights.folder}: its weights do not match its config.json:\n  "
            + "\n  ".join(problems)
        )
    for assignment in plan:
        arrays = [weights.get(name) for name in assignment.sources]
        assignment.variable.assign(assignment.value(arrays))


# --- Tokenizer ---------------------------------------------------------------------------


def load_huggingface_tokenizer(folder, config):
    """The folder's tokenizer, or None (with a warning) when it has no vocabulary.

    `vocab.txt` with `tokenizer_config.json` (do_lower_case, strip_accents,
    tokenize_chinese_chars, special tokens) or a `tokenizer.json`; the longest sequence
    is capped at the model's `max_positions`.
    """
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    folder = pathlib.Path(folder)
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        logger.warning(
            "%s has no tokenizer (looked for %s); the model is imported without one.",
            folder,
            list(TOKENIZER_FILES),
        )
        return None
    # BertTokenizer reads both transformers layouts (see BertTokenizer.from_preset).
    tokenizer = BertTokenizer.from_preset(folder)
    if tokenizer.max_length > config.max_positions:
        settings = dict(tokenizer.get_config(), max_length=config.max_positions)
        tokenizer = BertTokenizer(tokenizer.vocabulary, **settings)
    if tokenizer.vocabulary_size > config.vocabulary_size:
        logger.warning(
            "%s: the tokenizer has %d tokens but the model only %d embeddings; ids from "
            "%d up will be rejected by the model.",
            folder,
            tokenizer.vocabulary_size,
            config.vocabulary_size,
            config.vocabulary_size,
        )
    return tokenizer
