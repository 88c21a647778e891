"""Exports kbert models as Hugging Face `transformers` folders.

The folder holds what `save_pretrained` writes for BERT: `config.json` (with the
`BertFor*` class in `architectures`, and `id2label`/`label2id` for classifiers),
`model.safetensors`, `vocab.txt` and `tokenizer_config.json`. transformers'
`BertFor*.from_pretrained` (and `AutoModel*`) load it and give kbert's outputs.

The layouts are those of `huggingface_import`, inverted: Keras (in, out) kernels become
PyTorch (out, in) weights, the fused (H, 3H) q/k/v kernel is split into query, key and
value, and the masked-LM decoder is left out because transformers ties it to the word
embeddings. Classes whose transformers counterpart has no pooler
(`BertForMaskedLM`, `BertForTokenClassification`, `BertForQuestionAnswering`) are written
without it, as transformers writes them.

The folder is written into a staging folder and renamed into place
(`kbert.presets.preset_writer.staged_folder`), under the destination's
`kbert.files.OutputLock` from the destination check on; the free space is checked before
the weights are written, and a full disk is one `OSError` (errno ENOSPC) with the
previous export in place.
"""

import logging
import pathlib

import numpy as np

from kbert.checkpoints import huggingface_import
from kbert.files.atomic_write import check_free_space
from kbert.files.atomic_write import raise_if_disk_full
from kbert.files.atomic_write import write_json_atomically
from kbert.files.atomic_write import write_text_atomically
from kbert.files.output_lock import OutputLock

logger = logging.getLogger("kbert.checkpoints")

# kbert class -> transformers class (the inverse of huggingface_import.ARCHITECTURES).
ARCHITECTURES = {kbert: hf for hf, kbert in huggingface_import.ARCHITECTURES.items()}
_WITHOUT_POOLER = ("BertMaskedLM", "BertTokenClassifier", "BertQuestionAnswerer")
# kbert class -> (kbert head layer, transformers Linear) for the one-Dense heads.
_LINEAR_HEADS = {
    "BertClassifier": ("classifier_head", "classifier"),
    "BertTokenClassifier": ("token_classifier_head", "classifier"),
    "BertQuestionAnswerer": ("span_head", "qa_outputs"),
}
# kbert activation -> transformers hidden_act. "gelu_new" is transformers' name for the
# tanh approximation (what keras-hub and the later google-research code compute).
ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_approximate": "gelu_new",
    "relu": "relu",
    "silu": "silu",
    "tanh": "tanh",
}
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
VOCABULARY_FILE = "vocab.txt"


def huggingface_config(model, tokenizer=None):
    """The transformers `config.json` dict for a kbert model."""
    class_name = type(model).__name__
    if class_name not in ARCHITECTURES:
        raise ValueError(
            f"Cannot export a {class_name} to Hugging Face; supported: {sorted(ARCHITECTURES)}"
        )
    backbone = getattr(model, "backbone", model)
    values = backbone.bert_config.to_dict()
    config = {
        "architectures": [ARCHITECTURES[class_name]],
        "model_type": "bert",
        **{
            hf_name: values[kbert_name]
            for hf_name, kbert_name in huggingface_import.CONFIG_FIELDS.items()
        },
        "hidden_act": ACTIVATIONS[values["activation"]],
        "position_embedding_type": "absolute",
        "pad_token_id": tokenizer.pad_token_id if tokenizer is not None else 0,
        "tie_word_embeddings": True,
    }
    if class_name in ("BertClassifier", "BertTokenClassifier"):
        labels = model.label_names or [f"LABEL_{index}" for index in range(model.num_classes)]
        config["id2label"] = {str(index): label for index, label in enumerate(labels)}
        config["label2id"] = {label: index for index, label in enumerate(labels)}
        config["classifier_dropout"] = model.dropout
    return config


def huggingface_weights(model):
    """`{transformers tensor name: float32 array}` for a kbert model, as save_pretrained names them."""
    import keras

    def array(variable):
        return np.ascontiguousarray(keras.ops.convert_to_numpy(variable), dtype=np.float32)

    class_name = type(model).__name__
    backbone = getattr(model, "backbone", model)
    prefix = "" if model is backbone else "bert."
    hidden_size = backbone.bert_config.hidden_size
    tensors = {}

    def linear(name, layer):
        tensors[f"{name}.weight"] = np.ascontiguousarray(array(layer.kernel).T)
        tensors[f"{name}.bias"] = array(layer.bias)

    def layer_norm(name, layer):
        tensors[f"{name}.weight"] = array(layer.gamma)
        tensors[f"{name}.bias"] = array(layer.beta)

    embeddings = backbone.embeddings
    tensors[f"{prefix}embeddings.word_embeddings.weight"] = array(
        embeddings.token_embedding.embeddings
    )
    tensors[f"{prefix}embeddings.position_embeddings.weight"] = array(
        embeddings.position_embeddings
    )
    tensors[f"{prefix}embeddings.token_type_embeddings.weight"] = array(
        embeddings.segment_embedding.embeddings
    )
    layer_norm(f"{prefix}embeddings.LayerNorm", embeddings.layer_norm)
    for index, block in enumerate(backbone.encoder_blocks):
        name = f"{prefix}encoder.layer.{index}."
        attention = block.self_attention
        kernel = array(attention.query_key_value.kernel)  # (H, 3H): [query | key | value]
        bias = array(attention.query_key_value.bias)
        for part, start in (("query", 0), ("key", hidden_size), ("value", 2 * hidden_size)):
            columns = slice(start, start + hidden_size)
            tensors[f"{name}attention.self.{part}.weight"] = np.ascontiguousarray(
                kernel[:, columns].T
            )
            tensors[f"{name}attention.self.{part}.bias"] = np.ascontiguousarray(bias[columns])
        linear(f"{name}attention.output.dense", attention.output_projection)
        layer_norm(f"{name}attention.output.LayerNorm", block.attention_layer_norm)
        linear(f"{name}intermediate.dense", block.intermediate_dense)
        linear(f"{name}output.dense", block.output_dense)
        layer_norm(f"{name}output.LayerNorm", block.output_layer_norm)
    if class_name not in _WITHOUT_POOLER:
        linear(f"{prefix}pooler.dense", backbone.pooler.dense)

    if class_name in ("BertPretrainer", "BertMaskedLM"):
        head = model.get_layer("masked_lm_head")
        linear("cls.predictions.transform.dense", head.transform_dense)
        layer_norm("cls.predictions.transform.LayerNorm", head.layer_norm)
        tensors["cls.predictions.bias"] = array(head.output_bias)
        if class_name == "BertPretrainer":
            linear("cls.seq_relationship", model.get_layer("next_sentence_head"))
    elif class_name in _LINEAR_HEADS:
        layer_name, hf_name = _LINEAR_HEADS[class_name]
        linear(hf_name, model.get_layer(layer_name))
    return tensors


def huggingface_tokenizer_config(tokenizer):
    """transformers' `tokenizer_config.json` for a kbert `BertTokenizer`."""
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": tokenizer.lowercase,
        "strip_accents": tokenizer.strip_accents,
        "tokenize_chinese_chars": tokenizer.tokenize_chinese_chars,
        "do_basic_tokenize": True,
        "unk_token": tokenizer.unk_token,
        "sep_token": tokenizer.sep_token,
        "pad_token": tokenizer.pad_token,
        "cls_token": tokenizer.cls_token,
        "mask_token": tokenizer.mask_token,
        "model_max_length": tokenizer.max_length,
        "clean_up_tokenization_spaces": False,
    }


def export_huggingface(source, destination, overwrite=False, tokenizer=None):
    """Writes a kbert model as a Hugging Face transformers folder.

    Args:
        source: a kbert model, or anything `kbert.checkpoints.load_checkpoint` reads (a
            kbert preset folder, another supported checkpoint, a published name).
        destination: the folder to write. It must not exist or be empty, unless
            `overwrite` is set and it holds a Hugging Face BERT folder.
        overwrite: replace an existing Hugging Face folder at `destination`.
        tokenizer: the tokenizer to write with a model `source`; defaults to its
            `.tokenizer`. Ignored for a folder `source`, whose own tokenizer is used.

    Returns:
        The folder written, as an absolute `pathlib.Path`.

    Example:

    >>> export_huggingface("presets/my_classifier", "exports/my_classifier")
    >>> transformers.BertForSequenceClassification.from_pretrained("exports/my_classifier")
    """
    destination = pathlib.Path(destination).expanduser()
    with OutputLock(destination):
        model, tokenizer = resolve_export_source(source, tokenizer)
        check_export_destination(
            destination,
            overwrite,
            huggingface_import.is_huggingface_folder,
            "a Hugging Face folder",
        )
        config = _write_huggingface_folder(model, tokenizer, destination)
    destination = destination.resolve()
    logger.info(
        "Wrote %s as %s to %s.", type(model).__name__, config["architectures"][0], destination
    )
    return destination


def _write_huggingface_folder(model, tokenizer, destination):
    """Writes the export into a staging folder swapped in at `destination`; returns its config."""
    from kbert.presets.preset_writer import staged_folder

    config = huggingface_config(model, tokenizer)
    tensors = huggingface_weights(model)
    if tokenizer is None:
        logger.warning("Exporting %s without a tokenizer: none was given.", type(model).__name__)
    with staged_folder(destination) as staging:
        write_json_atomically(staging / huggingface_import.CONFIG_FILE, config)
        _save_safetensors(tensors, staging / huggingface_import.SAFETENSORS_FILE)
        if tokenizer is not None:
            write_text_atomically(
                staging / VOCABULARY_FILE,
                "".join(token + "\n" for token in tokenizer.vocabulary),
            )
            write_json_atomically(
                staging / TOKENIZER_CONFIG_FILE, huggingface_tokenizer_config(tokenizer)
            )
    return config


def _save_safetensors(tensors, path):
    """`safetensors.numpy.save_file` with a free-space check and a plain disk-full error."""
    from safetensors import SafetensorError
    from safetensors.numpy import save_file

    check_free_space(path.parent, sum(array.nbytes for array in tensors.values()), path)
    try:
        save_file(tensors, path, metadata={"format": "pt"})
    except (SafetensorError, OSError) as error:
        raise_if_disk_full(error, path)
        raise OSError(f"Could not write {str(path)!r}: {error}") from None


def resolve_export_source(source, tokenizer=None):
    """`(model, tokenizer)` from a kbert model or a checkpoint folder/name."""
    if hasattr(source, "weights") and hasattr(source, "count_params"):
        if tokenizer is None:
            tokenizer = getattr(source, "tokenizer", None)
        return source, tokenizer
    from kbert.checkpoints.convert import load_checkpoint

    model, tokenizer, _ = load_checkpoint(source)
    return model, tokenizer


def check_export_destination(destination, overwrite, is_same_kind, kind):
    """Refuses to replace anything but an empty folder, or (with `overwrite`) `kind`."""
    if not destination.exists():
        return
    if not destination.is_dir():
        raise ValueError(f"The destination is a file, not a folder: {str(destination)!r}")
    if not any(destination.iterdir()):
        return
    if not overwrite:
        raise ValueError(
            f"The destination {str(destination)!r} exists and is not empty; pass "
            "overwrite=True (`--overwrite`) to replace it."
        )
    if not is_same_kind(destination):
        raise ValueError(f"Refusing to overwrite {str(destination)!r}: it is not {kind}.")
