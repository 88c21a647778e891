"""Imports the original google-research/bert TensorFlow 1 checkpoints.

A released checkpoint is a folder such as `uncased_L-12_H-768_A-12/` holding
`bert_config.json`, `vocab.txt` and the checkpoint `bert_model.ckpt.index` +
`bert_model.ckpt.data-00000-of-00001`. Whole-word-masking, multilingual and Chinese
releases have the same layout, and so do the folders `run_pretraining.py`,
`run_classifier.py` and `run_squad.py` write (`model.ckpt-STEP.*`).

Variable names follow `modeling.py`: `bert/embeddings/word_embeddings`,
`bert/encoder/layer_0/attention/self/query/kernel`, `bert/pooler/dense/kernel`, plus the
pretraining heads `cls/predictions/...` (masked LM) and `cls/seq_relationship/...`
(next sentence), or the fine-tuning heads `output_weights`/`output_bias` (classifier)
and `cls/squad/...` (SQuAD). Dense kernels are already (in, out), as in Keras; only the
heads' `output_weights` are (out, in) and are transposed. Query, key and value are
concatenated into kbert's fused (H, 3H) kernel. Optimizer state saved alongside
(`adam_m`, `adam_v`, `global_step`, ...) is skipped.

The model's heads decide the kbert class: masked LM + next sentence -> `BertPretrainer`,
masked LM alone -> `BertMaskedLM`, `cls/squad` -> `BertQuestionAnswerer`,
`output_weights` -> `BertClassifier`, none -> `BertBackbone`.

Google's `bert_config.json` says `"hidden_act": "gelu"`; the released checkpoints were
trained with the exact (erf) GELU, which kbert's "gelu" is (the repository's later
`modeling.py` computes the tanh approximation; the two differ by under 1e-3). Casing is
not recorded in the folder: it is read from the folder's name ("uncased" lower-cases)
unless given.

The checkpoint is read with TensorFlow's checkpoint reader (TensorFlow is imported only
here, when a Google checkpoint is converted); it holds tensors only and cannot run code.
Its files must be regular files inside the folder (`kbert.files.bounded_reader`).
Declared tensor sizes are checked against the data files (their stored bytes: a sparse
file is refused) and the load budget before any tensor is read, and the config against
the declared tensors before any model is built (`BertConfig.check_weights_hold`).
"""

import logging
import pathlib
import re

import numpy as np

from kbert.checkpoints import huggingface_import
from kbert.files.bounded_reader import checked_path
from kbert.files.load_budget import check_load_budget
from kbert.files.load_budget import check_stored_bytes
from kbert.files.load_budget import stored_bytes

logger = logging.getLogger("kbert.checkpoints")

CONFIG_FILE = "bert_config.json"
CHECKPOINT_PREFIX = "bert_model.ckpt"
VOCABULARY_FILE = "vocab.txt"

# Optimizer state and bookkeeping that training saves beside the weights.
_OPTIMIZER_STATE = re.compile(
    r"(^|/)(adam_m|adam_v|Adam|Adam_1|Momentum|LAMB|LAMB_1)$|^global_step$|^beta[12]_power"
)
_MASKED_LM_BIAS = "cls/predictions/output_bias"
_NEXT_SENTENCE = "cls/seq_relationship"
_SQUAD = "cls/squad"
_CLASSIFIER_WEIGHTS = "output_weights"


def checkpoint_prefix(folder):
    """The checkpoint prefix in `folder` (`bert_model.ckpt`, or the one `model.ckpt-N`), or None."""
    folder = pathlib.Path(folder)
    if (folder / f"{CHECKPOINT_PREFIX}.index").is_file():
        return folder / CHECKPOINT_PREFIX
    prefixes = [
        path.with_suffix("")
        for path in folder.glob("*.ckpt*.index")
        if any(folder.glob(f"{path.with_suffix('').name}.data-*"))
    ]
    if len(prefixes) == 1:
        return prefixes[0]
    return None


def is_google_folder(folder):
    """Whether `folder` has a `bert_config.json` and one TensorFlow checkpoint."""
    folder = pathlib.Path(folder)
    return (folder / CONFIG_FILE).is_file() and checkpoint_prefix(folder) is not None


def load_google(folder, lowercase=None):
    """Builds the kbert model equivalent to an original google-research/bert checkpoint.

    Args:
        folder: a folder with `bert_config.json`, `vocab.txt` and a checkpoint
            (`bert_model.ckpt.index` and `.data-*` files).
        lowercase: whether the tokenizer lower-cases. None decides from the folder's
            name: "uncased" in it means True, "cased" False; other names default to
            True (Google's `do_lower_case` default) with a warning.

    Returns:
        `(model, tokenizer)`, as `kbert.checkpoints.load_huggingface` does.

    Raises:
        ValueError: on a bad config, a missing or mis-shaped variable (naming it and
            both shapes), a tensor larger than the checkpoint's data, or an unreadable
            checkpoint.

    Example:

    >>> model, tokenizer = load_google("downloads/uncased_L-12_H-768_A-12")
    >>> type(model).__name__
    'BertPretrainer'
    """
    folder = pathlib.Path(folder).expanduser()
    prefix = checkpoint_prefix(folder)
    if prefix is None:
        raise ValueError(
            f"{folder} has no TensorFlow checkpoint: looked for {CHECKPOINT_PREFIX}.index "
            "with .data-* files (or a single model.ckpt-N checkpoint)."
        )
    config_path = folder / CONFIG_FILE
    google_config = huggingface_import.read_huggingface_config(config_path)
    config = huggingface_import.config_from_huggingface(google_config, config_path)
    reader = _CheckpointReader(prefix)
    model_variables = [name for name in reader.shapes if not _OPTIMIZER_STATE.search(name)]
    config.check_weights_hold(
        sum(int(np.prod(reader.shapes[name], dtype=np.int64)) for name in model_variables),
        config_path,
        include_pooler=False,
    )

    model = _build_model(config, reader)
    backbone = getattr(model, "backbone", model)
    plan = _backbone_plan(backbone, reader, model) + _head_plan(model)
    _assign(plan, reader)
    reader.report_unused()

    tokenizer = _load_tokenizer(folder, config, lowercase)
    if model is not backbone:
        model.tokenizer = tokenizer
    logger.info(
        "Loaded Google checkpoint %s as %s (%d parameters).",
        prefix,
        type(model).__name__,
        model.count_params(),
    )
    return model, tokenizer


# --- Reading -------------------------------------------------------------------------------


class _CheckpointReader:
    """The checkpoint's variables by name; shapes are known before any data is read."""

    def __init__(self, prefix):
        import tensorflow as tf

        self.prefix = prefix
        data_files = sorted(prefix.parent.glob(f"{prefix.name}.data-*"))
        for path in [prefix.parent / f"{prefix.name}.index", *data_files]:
            checked_path(path)
        try:
            self._reader = tf.train.load_checkpoint(str(prefix))
        except (tf.errors.OpError, ValueError) as error:
            raise ValueError(f"Cannot read TensorFlow checkpoint {prefix}: {error}") from None
        self.shapes = {
            name: tuple(shape) for name, shape in self._reader.get_variable_to_shape_map().items()
        }
        self.dtypes = {
            name: dtype.as_numpy_dtype
            for name, dtype in self._reader.get_variable_to_dtype_map().items()
        }
        self.data_bytes = sum(path.stat().st_size for path in data_files)
        declared = sum(self.declared_bytes(name) for name in self.shapes)
        check_stored_bytes(
            f"{prefix}.data-*",
            declared,
            stored=sum(stored_bytes(path) for path in data_files),
            what="its variables",
        )
        check_load_budget(prefix, declared, "its variables")
        self.used = set()

    def __contains__(self, name):
        return name in self.shapes

    def declared_bytes(self, name):
        return (
            int(np.prod(self.shapes[name], dtype=np.int64)) * np.dtype(self.dtypes[name]).itemsize
        )

    def get(self, name):
        import tensorflow as tf

        self.used.add(name)
        try:
            value = np.asarray(self._reader.get_tensor(name))
        except tf.errors.OpError as error:
            raise ValueError(f"{self.prefix}: cannot read variable {name!r}: {error}") from None
        return value.astype(np.float32) if value.dtype != np.float32 else value

    def report_unused(self):
        skipped = sorted(name for name in self.shapes if _OPTIMIZER_STATE.search(name))
        if skipped:
            logger.info(
                "%s: skipped %d optimizer variable(s) (adam_m, adam_v, global_step, ...).",
                self.prefix,
                len(skipped),
            )
        unused = sorted(
            name
            for name in self.shapes
            if name not in self.used and not _OPTIMIZER_STATE.search(name)
        )
        if unused:
            logger.warning(
                "%s: %d variable(s) in the checkpoint were not imported: %s",
                self.prefix,
                len(unused),
                unused,
            )


# --- Plan ----------------------------------------------------------------------------------


class _Assignment:
    """One kbert variable from checkpoint variables concatenated on the last axis.

    With `transpose`, each source is an (out, in) matrix turned into an (in, out) kernel.
    """

    def __init__(self, variable, sources, transpose=False):
        self.variable = variable
        self.sources = tuple(sources)
        self.transpose = transpose

    def expected_source_shape(self):
        shape = list(self.variable.shape)
        shape[-1] //= len(self.sources)
        return tuple(reversed(shape)) if self.transpose else tuple(shape)


def _dense(layer, scope):
    return [
        _Assignment(layer.kernel, [f"{scope}/kernel"]),
        _Assignment(layer.bias, [f"{scope}/bias"]),
    ]


def _layer_norm(layer, scope):
    return [
        _Assignment(layer.gamma, [f"{scope}/gamma"]),
        _Assignment(layer.beta, [f"{scope}/beta"]),
    ]


def _output_layer(layer, scope):
    """A head written as `output_weights` (out, in) and `output_bias`."""
    return [
        _Assignment(layer.kernel, [f"{scope}output_weights"], transpose=True),
        _Assignment(layer.bias, [f"{scope}output_bias"]),
    ]


def _build_model(config, reader):
    from kbert import models

    backbone = models.BertBackbone.from_config_object(config)
    if _MASKED_LM_BIAS in reader:
        if f"{_NEXT_SENTENCE}/output_weights" in reader:
            return models.BertPretrainer(backbone)
        return models.BertMaskedLM(backbone)
    if f"{_SQUAD}/output_weights" in reader:
        return models.BertQuestionAnswerer(backbone)
    if _CLASSIFIER_WEIGHTS in reader:
        shape = reader.shapes[_CLASSIFIER_WEIGHTS]
        if len(shape) != 2:
            raise ValueError(
                f"{reader.prefix}: classifier variable {_CLASSIFIER_WEIGHTS!r} must be "
                f"(num_classes, hidden_size). Received shape {shape}"
            )
        return models.BertClassifier(backbone, num_classes=shape[0])
    return backbone


def _backbone_plan(backbone, reader, model):
    embeddings = backbone.embeddings
    plan = [
        _Assignment(embeddings.token_embedding.embeddings, ["bert/embeddings/word_embeddings"]),
        _Assignment(embeddings.position_embeddings, ["bert/embeddings/position_embeddings"]),
        _Assignment(
            embeddings.segment_embedding.embeddings, ["bert/embeddings/token_type_embeddings"]
        ),
        *_layer_norm(embeddings.layer_norm, "bert/embeddings/LayerNorm"),
    ]
    for index, block in enumerate(backbone.encoder_blocks):
        scope = f"bert/encoder/layer_{index}"
        attention = block.self_attention
        projections = [f"{scope}/attention/self/{part}" for part in ("query", "key", "value")]
        plan += [
            _Assignment(
                attention.query_key_value.kernel, [f"{name}/kernel" for name in projections]
            ),
            _Assignment(attention.query_key_value.bias, [f"{name}/bias" for name in projections]),
            *_dense(attention.output_projection, f"{scope}/attention/output/dense"),
            *_layer_norm(block.attention_layer_norm, f"{scope}/attention/output/LayerNorm"),
            *_dense(block.intermediate_dense, f"{scope}/intermediate/dense"),
            *_dense(block.output_dense, f"{scope}/output/dense"),
            *_layer_norm(block.output_layer_norm, f"{scope}/output/LayerNorm"),
        ]
    from kbert import models

    if "bert/pooler/dense/kernel" in reader or isinstance(
        model, (models.BertPretrainer, models.BertClassifier)
    ):
        # Present in every released checkpoint; tasks that use it report it missing.
        plan += _dense(backbone.pooler.dense, "bert/pooler/dense")
    else:
        logger.warning(
            "%s has no pooler variables: the pooler keeps its random initialisation.",
            reader.prefix,
        )
    return plan


def _head_plan(model):
    from kbert import models

    if isinstance(model, (models.BertPretrainer, models.BertMaskedLM)):
        head = model.get_layer("masked_lm_head")
        plan = [
            *_dense(head.transform_dense, "cls/predictions/transform/dense"),
            *_layer_norm(head.layer_norm, "cls/predictions/transform/LayerNorm"),
            _Assignment(head.output_bias, [_MASKED_LM_BIAS]),
        ]
        if isinstance(model, models.BertPretrainer):
            plan += _output_layer(model.get_layer("next_sentence_head"), f"{_NEXT_SENTENCE}/")
        return plan
    if isinstance(model, models.BertQuestionAnswerer):
        return _output_layer(model.get_layer("span_head"), f"{_SQUAD}/")
    if isinstance(model, models.BertClassifier):
        return _output_layer(model.get_layer("classifier_head"), "")
    return []


def _assign(plan, reader):
    """Checks every source variable of `plan`, then assigns all kbert variables (or none)."""
    problems = []
    for assignment in plan:
        expected = assignment.expected_source_shape()
        for name in assignment.sources:
            if name not in reader:
                problems.append(
                    f"missing variable {name!r} (for kbert variable "
                    f"{assignment.variable.path!r}, expected shape {expected})"
                )
            elif reader.shapes[name] != expected:
                problems.append(
                    f"variable {name!r} has shape {reader.shapes[name]}, expected {expected} "
                    f"(for kbert variable {assignment.variable.path!r})"
                )
            elif not _is_float(reader.dtypes[name]):
                problems.append(
                    f"variable {name!r} has dtype {np.dtype(reader.dtypes[name])}, not a float"
                )
            elif reader.declared_bytes(name) > reader.data_bytes:
                problems.append(
                    f"variable {name!r} declares {reader.declared_bytes(name)} bytes, more "
                    f"than the checkpoint's data files hold ({reader.data_bytes} bytes)"
                )
    if problems:
        raise ValueError(
            f"Cannot import {reader.prefix}: its variables do not match {CONFIG_FILE}:\n  "
            + "\n  ".join(problems)
        )
    for assignment in plan:
        parts = [reader.get(name) for name in assignment.sources]
        parts = [part.T if assignment.transpose else part for part in parts]
        value = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)
        assignment.variable.assign(value)


def _is_float(dtype):
    # bfloat16 (from ml_dtypes) is not a NumPy floating subtype.
    return np.dtype(dtype).kind == "f" or np.dtype(dtype).name == "bfloat16"


# --- Tokenizer -----------------------------------------------------------------------------


def lowercase_from_folder_name(folder):
    """True for "...uncased...", False for "...cased...", None when the name says neither."""
    name = pathlib.Path(folder).resolve().name.lower()
    if "uncased" in name:
        return True
    if "cased" in name:
        return False
    return None


def _load_tokenizer(folder, config, lowercase):
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    vocabulary = folder / VOCABULARY_FILE
    if not vocabulary.is_file():
        logger.warning(
            "%s has no %s; the model is imported without a tokenizer.", folder, VOCABULARY_FILE
        )
        return None
    if lowercase is None:
        lowercase = lowercase_from_folder_name(folder)
        if lowercase is None:
            lowercase = True
            logger.warning(
                "%s: the folder name says neither 'uncased' nor 'cased'; the tokenizer "
                "lower-cases, as Google's do_lower_case default. Pass lowercase=False "
                "(`--cased`) for a cased model.",
                folder,
            )
    tokenizer = BertTokenizer(vocabulary, lowercase=lowercase, max_length=config.max_positions)
    if tokenizer.vocabulary_size != config.vocabulary_size:
        logger.warning(
            "%s: %s has %d tokens but %s says vocab_size=%d.",
            folder,
            VOCABULARY_FILE,
            tokenizer.vocabulary_size,
            CONFIG_FILE,
            config.vocabulary_size,
        )
    return tokenizer
