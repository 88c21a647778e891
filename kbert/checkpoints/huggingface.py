"""Hugging Face `transformers` BERT folders, both ways: the names, the config, the files.

A folder written by `save_pretrained` holds `config.json`, the weights as
`model.safetensors` (or `pytorch_model.bin`, either possibly sharded; see
`huggingface_tensors`), and the tokenizer as `vocab.txt` or `tokenizer.json` with
`tokenizer_config.json` (`tokenizer_files`). The `architectures` entry of `config.json`
says which heads the weights carry; each maps to one kbert task model
(`huggingface_config`, which reads and writes the config).

`WEIGHTS` is the one table between transformers' tensor names and kbert's variables,
read by the import (`read_huggingface`) and the export (`write_huggingface`). PyTorch
`Linear` weights are (out, in) and Keras kernels (in, out), so every linear weight is
transposed; transformers keeps query, key and value as three linears, kbert one fused
(H, 3H) kernel. The masked-LM decoder is tied to the word embeddings (verified on
import, left out on export). `BertForMaskedLM`, `BertForTokenClassification` and
`BertForQuestionAnswering` have no pooler: on import kbert's (unused by the task) is
drawn as a new model's would be, on export it is left out, as transformers writes them.

Every shape is checked against the weight files' headers, and the config's size against
the number of values they declare (`BertConfig.check_weights_hold`), before a tensor is
read. Nothing here imports Keras.
"""

import logging
import pathlib
import re

import numpy as np

from kbert.architecture import bert_layout
from kbert.checkpoints.checkpoint_data import CheckpointData
from kbert.checkpoints.huggingface_config import ARCHITECTURES
from kbert.checkpoints.huggingface_config import CONFIG_FILE
from kbert.checkpoints.huggingface_config import config_from_huggingface
from kbert.checkpoints.huggingface_config import huggingface_architecture
from kbert.checkpoints.huggingface_config import huggingface_config
from kbert.checkpoints.huggingface_config import huggingface_tokenizer_config
from kbert.checkpoints.huggingface_config import read_huggingface_config
from kbert.checkpoints.huggingface_config import task_arguments
from kbert.checkpoints.huggingface_tensors import BACKBONE_PREFIX
from kbert.checkpoints.huggingface_tensors import SAFETENSORS_FILE
from kbert.checkpoints.huggingface_tensors import WEIGHT_FILES
from kbert.checkpoints.huggingface_tensors import HuggingFaceTensors
from kbert.checkpoints.huggingface_tensors import is_backbone_name
from kbert.checkpoints.tokenizer_files import TOKENIZER_CONFIG_FILE
from kbert.checkpoints.tokenizer_files import VOCABULARY_FILE
from kbert.checkpoints.tokenizer_files import has_tokenizer_files
from kbert.checkpoints.tokenizer_files import read_tokenizer_folder
from kbert.checkpoints.tokenizer_files import vocabulary_text
from kbert.checkpoints.weight_map import SAME
from kbert.checkpoints.weight_map import TRANSPOSED
from kbert.checkpoints.weight_map import WeightMap
from kbert.files.atomic_write import atomic_path
from kbert.files.atomic_write import raise_if_disk_full
from kbert.files.atomic_write import write_json_atomically
from kbert.files.atomic_write import write_text_atomically
from kbert.model_table import model_class

logger = logging.getLogger("kbert.checkpoints")

# kbert classes whose transformers counterpart builds its BertModel with
# add_pooling_layer=False.
WITHOUT_POOLER = ("BertMaskedLM", "BertTokenClassifier", "BertQuestionAnswerer")


def _linear(kbert, huggingface):
    return {
        f"{kbert}/kernel": (TRANSPOSED, f"{huggingface}.weight"),
        f"{kbert}/bias": f"{huggingface}.bias",
    }


def _layer_norm(kbert, huggingface):
    return {f"{kbert}/gamma": f"{huggingface}.weight", f"{kbert}/beta": f"{huggingface}.bias"}


_BLOCK = bert_layout.BLOCK
_LAYER = "encoder.layer.{layer}"
_QKV = [f"{_LAYER}.attention.self.{part}" for part in ("query", "key", "value")]
# kbert variable template -> transformers tensor (backbone names without `bert.`).
WEIGHTS = WeightMap(
    {
        "backbone/embeddings/token_embedding/embeddings": "embeddings.word_embeddings.weight",
        "backbone/embeddings/position_embeddings": "embeddings.position_embeddings.weight",
        "backbone/embeddings/segment_embedding/embeddings": (
            "embeddings.token_type_embeddings.weight"
        ),
        **_layer_norm("backbone/embeddings/layer_norm", "embeddings.LayerNorm"),
        f"{_BLOCK}/self_attention/query_key_value/kernel": (
            TRANSPOSED,
            *(f"{name}.weight" for name in _QKV),
        ),
        f"{_BLOCK}/self_attention/query_key_value/bias": (SAME, *(f"{name}.bias" for name in _QKV)),
        **_linear(f"{_BLOCK}/self_attention/output_projection", f"{_LAYER}.attention.output.dense"),
        **_layer_norm(f"{_BLOCK}/attention_layer_norm", f"{_LAYER}.attention.output.LayerNorm"),
        **_linear(f"{_BLOCK}/intermediate_dense", f"{_LAYER}.intermediate.dense"),
        **_linear(f"{_BLOCK}/output_dense", f"{_LAYER}.output.dense"),
        **_layer_norm(f"{_BLOCK}/output_layer_norm", f"{_LAYER}.output.LayerNorm"),
        **_linear("backbone/pooler/dense", "pooler.dense"),
        **_linear("head/masked_lm_head/transform_dense", "cls.predictions.transform.dense"),
        **_layer_norm("head/masked_lm_head/layer_norm", "cls.predictions.transform.LayerNorm"),
        "head/masked_lm_head/output_bias": "cls.predictions.bias",
        **_linear("head/next_sentence_head", "cls.seq_relationship"),
        **_linear("head/classifier_head", "classifier"),
        **_linear("head/token_classifier_head", "classifier"),
        **_linear("head/span_head", "qa_outputs"),
        **_linear("head/choice_head", "classifier"),
    }
)

_WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
_MASKED_LM_BIAS = "cls.predictions.bias"
_DECODER_WEIGHT = "cls.predictions.decoder.weight"
_DECODER_BIAS = "cls.predictions.decoder.bias"
# Tensors that are in some files but carry nothing to import: the `position_ids` buffer
# (0..P-1) of older versions, and the masked-LM decoder, which is tied to the word
# embeddings (its bias is `cls.predictions.bias` again). Ties are verified, not assumed.
_IGNORABLE = re.compile(r"(^|\.)position_ids$|^cls\.predictions\.decoder\.(weight|bias)$")


def is_huggingface_folder(folder):
    """Whether `folder` has a `config.json` and a Hugging Face weights file."""
    folder = pathlib.Path(folder)
    return (folder / CONFIG_FILE).is_file() and any(
        (folder / name).is_file() for name in WEIGHT_FILES
    )


# --- Import --------------------------------------------------------------------------------


def _tie_decoder(tensors, hf_config):
    """Makes the word embeddings (and bias) stand for a decoder stored in their place."""
    if _DECODER_WEIGHT in tensors and _WORD_EMBEDDINGS not in tensors:
        # Tied tensors are stored once; some writers keep the decoder's name.
        tensors.alias(_WORD_EMBEDDINGS, _DECODER_WEIGHT)
    elif _DECODER_WEIGHT not in tensors and hf_config.get("tie_word_embeddings", True) is False:
        raise ValueError(
            f"{tensors.folder}: config.json sets tie_word_embeddings=false but the "
            f"checkpoint has no {_DECODER_WEIGHT!r}; kbert's masked-LM head is tied to "
            "the word embeddings."
        )
    if _MASKED_LM_BIAS not in tensors and _DECODER_BIAS in tensors:
        tensors.alias(_MASKED_LM_BIAS, _DECODER_BIAS)


def _check_tied_decoder(tensors, stored, word_embeddings):
    """Makes sure the masked-LM decoder is the word embedding, as kbert's head assumes."""
    if _DECODER_WEIGHT not in tensors or tensors.display(_DECODER_WEIGHT) == tensors.display(
        _WORD_EMBEDDINGS
    ):
        return
    decoder = stored.read(_DECODER_WEIGHT)
    if decoder.shape != word_embeddings.shape or not np.array_equal(decoder, word_embeddings):
        raise ValueError(
            f"{tensors.folder}: {tensors.display(_DECODER_WEIGHT)!r} differs from "
            f"the word embeddings {tensors.display(_WORD_EMBEDDINGS)!r}. kbert's "
            "masked-LM head is tied to the word embeddings and cannot hold a separate "
            "output embedding."
        )


def read_huggingface(folder):
    """The `CheckpointData` of a Hugging Face BERT folder.

    Args:
        folder: a folder written by transformers' `save_pretrained` (or laid out alike).

    Returns:
        The model as plain data: the kbert class matching the folder's architecture,
        its config, every weight by kbert path, and the tokenizer (None, with a
        warning, when the folder has none).

    Raises:
        ValueError: on an unsupported architecture or setting, or a missing or
            mis-shaped weight (naming it and both shapes).
        ImportError: for `pytorch_model.bin` when PyTorch is not installed.
    """
    folder = pathlib.Path(folder).expanduser()
    config_path = folder / CONFIG_FILE
    hf_config = read_huggingface_config(config_path)
    architecture = huggingface_architecture(hf_config, config_path)
    class_name = ARCHITECTURES[architecture]
    config = config_from_huggingface(hf_config, config_path)
    task = task_arguments(class_name, config, hf_config, config_path)
    tensors = HuggingFaceTensors(folder)
    # The reading is bounded by what the files store; nothing is read unless the file
    # holds as many numbers as the config's model has.
    config.check_weights_hold(
        sum(int(np.prod(tensors.shape(name), dtype=np.int64)) for name in tensors.file_names),
        config_path,
        include_pooler=False,
    )
    if "masked_lm_head" in model_class(class_name).head_layer_names:
        _tie_decoder(tensors, hf_config)
    variables = bert_layout.model_variables(config, class_name, task.get("num_classes"))
    pooler = [v for v in variables if v.path.startswith("backbone/pooler/")]
    drawn = []
    if not any(name.startswith("pooler.") for name in tensors.file_names):
        if class_name in WITHOUT_POOLER:
            logger.info(
                "%s: %s checkpoints have no pooler; kbert's (unused by this task) keeps its "
                "random initialisation.",
                folder,
                architecture,
            )
            drawn = pooler
        elif class_name == "BertBackbone":
            logger.warning(
                "%s has no pooler weights (saved with add_pooling_layer=False?): the "
                "backbone's `pooled_output` is randomly initialised.",
                folder,
            )
            drawn = pooler
    stored = tensors.stored_tensors()
    weights = WEIGHTS.read(
        [v for v in variables if v not in drawn], stored, config, against="its config.json"
    )
    if "masked_lm_head" in model_class(class_name).head_layer_names:
        _check_tied_decoder(
            tensors, stored, weights["backbone/embeddings/token_embedding/embeddings"]
        )
    generator = np.random.default_rng(np.random.randint(0, 2**31 - 1))
    weights.update({v.path: bert_layout.initial_value(v, config, generator) for v in drawn})
    stored.warn_unused(ignored=lambda name: bool(_IGNORABLE.search(name)))
    data = CheckpointData(
        class_name, config, weights, task, tokenizer=read_huggingface_tokenizer(folder, config)
    )
    return data.logged_as_loaded(f"{architecture} from {folder}")


def read_huggingface_tokenizer(folder, config):
    """The folder's `TokenizerData`, or None (with a warning) when it has no vocabulary.

    `vocab.txt` with `tokenizer_config.json` (do_lower_case, strip_accents,
    tokenize_chinese_chars, special tokens) or a `tokenizer.json`; the longest sequence
    is capped at the model's `max_positions`.
    """
    if not has_tokenizer_files(folder):
        logger.warning(
            "%s has no tokenizer (looked for %s); the model is imported without one.",
            folder,
            [VOCABULARY_FILE, "tokenizer.json"],
        )
        return None
    tokenizer = read_tokenizer_folder(folder)
    if tokenizer.setting("max_length") > config.max_positions:
        tokenizer = tokenizer.replace(max_length=config.max_positions)
    if len(tokenizer.vocabulary) > config.vocabulary_size:
        logger.warning(
            "%s: the tokenizer has %d tokens but the model only %d embeddings; ids from "
            "%d up will be rejected by the model.",
            folder,
            len(tokenizer.vocabulary),
            config.vocabulary_size,
            config.vocabulary_size,
        )
    return tokenizer


# --- Export --------------------------------------------------------------------------------


def huggingface_weights(data):
    """`{transformers tensor name: float32 array}` for `data`, as save_pretrained names them."""
    variables = [
        variable
        for variable in data.variables()
        if not (data.class_name in WITHOUT_POOLER and variable.path.startswith("backbone/pooler/"))
    ]
    data.require_weights(variables)
    prefix = "" if data.class_name == "BertBackbone" else BACKBONE_PREFIX
    return {
        (prefix + name if is_backbone_name(name) else name): array
        for name, array in WEIGHTS.write(variables, data.weights, data.config).items()
    }


def write_huggingface(data, folder):
    """Writes `data` as a Hugging Face folder into the (empty, staging) `folder`.

    Returns:
        The `config.json` dict written.
    """
    folder = pathlib.Path(folder)
    config = huggingface_config(data)
    tensors = huggingface_weights(data)
    write_json_atomically(folder / CONFIG_FILE, config)
    _save_safetensors(tensors, folder / SAFETENSORS_FILE)
    if data.tokenizer is None:
        logger.warning("Exporting %s without a tokenizer: none was given.", data.class_name)
    else:
        write_text_atomically(folder / VOCABULARY_FILE, vocabulary_text(data.tokenizer.vocabulary))
        write_json_atomically(
            folder / TOKENIZER_CONFIG_FILE, huggingface_tokenizer_config(data.tokenizer)
        )
    return config


def _save_safetensors(tensors, path):
    """`safetensors.numpy.save_file` through `atomic_path`: a free-space check, a plain
    disk-full error and the umask's file mode."""
    from safetensors import SafetensorError
    from safetensors.numpy import save_file

    nbytes = sum(array.nbytes for array in tensors.values())
    with atomic_path(path, expected_bytes=nbytes) as temporary:
        try:
            save_file(tensors, temporary, metadata={"format": "pt"})
        except (SafetensorError, OSError) as error:
            raise_if_disk_full(error, path)
            raise OSError(f"Could not write {str(path)!r}: {error}") from None
