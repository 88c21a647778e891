"""The original google-research/bert TensorFlow 1 checkpoints, read as plain data.

A released checkpoint is a folder such as `uncased_L-12_H-768_A-12/` holding
`bert_config.json`, `vocab.txt` and the checkpoint `bert_model.ckpt.index` +
`bert_model.ckpt.data-00000-of-00001`. Whole-word-masking, multilingual and Chinese
releases have the same layout, and so do the folders `run_pretraining.py`,
`run_classifier.py` and `run_squad.py` write (`model.ckpt-STEP.*`).

`WEIGHTS` is the table between `modeling.py`'s variable names
(`bert/encoder/layer_0/attention/self/query/kernel`, `bert/pooler/dense/kernel`, the
pretraining heads `cls/predictions/...` and `cls/seq_relationship/...`, the fine-tuning
heads `output_weights`/`output_bias` and `cls/squad/...`) and kbert's variables. Dense
kernels are already (in, out), as in Keras; only the heads' `output_weights` are
(out, in). Query, key and value are concatenated into kbert's fused (H, 3H) kernel.
Optimizer state saved alongside (`adam_m`, `adam_v`, `global_step`, ...) is skipped.

The heads present decide the kbert class: masked LM + next sentence -> `BertPretrainer`,
masked LM alone -> `BertMaskedLM`, `cls/squad` -> `BertQuestionAnswerer`,
`output_weights` -> `BertClassifier`, none -> `BertBackbone`.

Google's `bert_config.json` says `"hidden_act": "gelu"`; the released checkpoints were
trained with the exact (erf) GELU, which kbert's "gelu" is (the repository's later
`modeling.py` computes the tanh approximation; the two differ by under 1e-3). Casing is
not recorded in the folder: it is read from the folder's name ("uncased" lower-cases)
unless given.

The checkpoint is read with TensorFlow's checkpoint reader (TensorFlow is imported only
here, when a Google checkpoint is read); it holds tensors only and cannot run code. Its
files must be regular files inside the folder (`kbert.files.bounded_reader`). Declared
tensor sizes are checked against the data files (their stored bytes: a sparse file is
refused) and the load budget, and every shape against the config, before any tensor is
read.
"""

import logging
import pathlib
import re

import numpy as np

from kbert.architecture import bert_layout
from kbert.checkpoints.checkpoint_data import CheckpointData
from kbert.checkpoints.huggingface_config import config_from_huggingface
from kbert.checkpoints.huggingface_config import read_huggingface_config
from kbert.checkpoints.stored_tensors import StoredTensors
from kbert.checkpoints.tokenizer_data import TokenizerData
from kbert.checkpoints.tokenizer_files import read_vocabulary
from kbert.checkpoints.weight_map import SAME
from kbert.checkpoints.weight_map import TRANSPOSED
from kbert.checkpoints.weight_map import WeightMap
from kbert.files.bounded_reader import checked_path
from kbert.files.load_budget import check_load_budget
from kbert.files.load_budget import check_stored_bytes
from kbert.files.load_budget import stored_bytes
from kbert.model_table import model_class

logger = logging.getLogger("kbert.checkpoints")

CONFIG_FILE = "bert_config.json"
CHECKPOINT_PREFIX = "bert_model.ckpt"
VOCABULARY_FILE = "vocab.txt"

# Optimizer state and bookkeeping that training saves beside the weights.
_OPTIMIZER_STATE = re.compile(
    r"(^|/)(adam_m|adam_v|Adam|Adam_1|Momentum|LAMB|LAMB_1)$|^global_step$|^beta[12]_power"
)
_MASKED_LM_BIAS = "cls/predictions/output_bias"
_NEXT_SENTENCE = "cls/seq_relationship/"
_SQUAD = "cls/squad/"
_CLASSIFIER_WEIGHTS = "output_weights"


def _dense(kbert, google):
    return {f"{kbert}/kernel": f"{google}/kernel", f"{kbert}/bias": f"{google}/bias"}


def _layer_norm(kbert, google):
    return {f"{kbert}/gamma": f"{google}/gamma", f"{kbert}/beta": f"{google}/beta"}


def _output_layer(kbert, scope):
    """A head written as `output_weights` (out, in) and `output_bias`."""
    return {
        f"{kbert}/kernel": (TRANSPOSED, f"{scope}output_weights"),
        f"{kbert}/bias": f"{scope}output_bias",
    }


_BLOCK = bert_layout.BLOCK
_LAYER = "bert/encoder/layer_{layer}"
_QKV = [f"{_LAYER}/attention/self/{part}" for part in ("query", "key", "value")]
# kbert variable template -> the variable of google-research/bert's modeling.py.
WEIGHTS = WeightMap(
    {
        "backbone/embeddings/token_embedding/embeddings": "bert/embeddings/word_embeddings",
        "backbone/embeddings/position_embeddings": "bert/embeddings/position_embeddings",
        "backbone/embeddings/segment_embedding/embeddings": "bert/embeddings/token_type_embeddings",
        **_layer_norm("backbone/embeddings/layer_norm", "bert/embeddings/LayerNorm"),
        f"{_BLOCK}/self_attention/query_key_value/kernel": (SAME, *(f"{n}/kernel" for n in _QKV)),
        f"{_BLOCK}/self_attention/query_key_value/bias": (SAME, *(f"{n}/bias" for n in _QKV)),
        **_dense(f"{_BLOCK}/self_attention/output_projection", f"{_LAYER}/attention/output/dense"),
        **_layer_norm(f"{_BLOCK}/attention_layer_norm", f"{_LAYER}/attention/output/LayerNorm"),
        **_dense(f"{_BLOCK}/intermediate_dense", f"{_LAYER}/intermediate/dense"),
        **_dense(f"{_BLOCK}/output_dense", f"{_LAYER}/output/dense"),
        **_layer_norm(f"{_BLOCK}/output_layer_norm", f"{_LAYER}/output/LayerNorm"),
        **_dense("backbone/pooler/dense", "bert/pooler/dense"),
        **_dense("head/masked_lm_head/transform_dense", "cls/predictions/transform/dense"),
        **_layer_norm("head/masked_lm_head/layer_norm", "cls/predictions/transform/LayerNorm"),
        "head/masked_lm_head/output_bias": _MASKED_LM_BIAS,
        **_output_layer("head/next_sentence_head", _NEXT_SENTENCE),
        **_output_layer("head/span_head", _SQUAD),
        **_output_layer("head/classifier_head", ""),
    }
)


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


class _CheckpointReader:
    """The checkpoint's variables by name; shapes are known before any data is read."""

    def __init__(self, prefix):
        from kbert.optional_packages import tensorflow_quietly

        tf = tensorflow_quietly("Reading a Google TensorFlow checkpoint")
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

    def declared_bytes(self, name):
        return (
            int(np.prod(self.shapes[name], dtype=np.int64)) * np.dtype(self.dtypes[name]).itemsize
        )

    def problem(self, name):
        dtype = np.dtype(self.dtypes[name])
        # bfloat16 (from ml_dtypes) is not a NumPy floating subtype.
        if dtype.kind != "f" and dtype.name != "bfloat16":
            return f"has dtype {dtype}, not a float"
        if self.declared_bytes(name) > self.data_bytes:
            return (
                f"declares {self.declared_bytes(name)} bytes, more than the checkpoint's "
                f"data files hold ({self.data_bytes} bytes)"
            )
        return None

    def read(self, name):
        import tensorflow as tf

        try:
            value = np.asarray(self._reader.get_tensor(name))
        except tf.errors.OpError as error:
            raise ValueError(f"{self.prefix}: cannot read variable {name!r}: {error}") from None
        return value.astype(np.float32) if value.dtype != np.float32 else value

    def stored_tensors(self):
        """The model's variables (optimizer state left out) as `StoredTensors`."""
        shapes = {
            name: shape for name, shape in self.shapes.items() if not _OPTIMIZER_STATE.search(name)
        }
        return StoredTensors(self.prefix, shapes, self.read, noun="variable", check=self.problem)

    def report_skipped(self):
        skipped = sorted(name for name in self.shapes if _OPTIMIZER_STATE.search(name))
        if skipped:
            logger.info(
                "%s: skipped %d optimizer variable(s) (adam_m, adam_v, global_step, ...).",
                self.prefix,
                len(skipped),
            )


def _model_class(tensors, prefix):
    """`(class_name, task arguments)` from the heads the checkpoint holds."""
    if _MASKED_LM_BIAS in tensors:
        class_name = (
            "BertPretrainer" if f"{_NEXT_SENTENCE}output_weights" in tensors else "BertMaskedLM"
        )
        return class_name, {}
    if f"{_SQUAD}output_weights" in tensors:
        return "BertQuestionAnswerer", {}
    if _CLASSIFIER_WEIGHTS in tensors:
        shape = tensors.shapes[_CLASSIFIER_WEIGHTS]
        if len(shape) != 2:
            raise ValueError(
                f"{prefix}: classifier variable {_CLASSIFIER_WEIGHTS!r} must be "
                f"(num_classes, hidden_size). Received shape {shape}"
            )
        return "BertClassifier", {"num_classes": shape[0]}
    return "BertBackbone", {}


def read_google(folder, lowercase=None):
    """The `CheckpointData` of an original google-research/bert checkpoint folder.

    Args:
        folder: a folder with `bert_config.json`, `vocab.txt` and a checkpoint
            (`bert_model.ckpt.index` and `.data-*` files).
        lowercase: whether the tokenizer lower-cases. None decides from the folder's
            name: "uncased" in it means True, "cased" False; other names default to
            True (Google's `do_lower_case` default) with a warning.

    Raises:
        ValueError: on a bad config, a missing or mis-shaped variable (naming it and
            both shapes), a tensor larger than the checkpoint's data, or an unreadable
            checkpoint.
    """
    folder = pathlib.Path(folder).expanduser()
    prefix = checkpoint_prefix(folder)
    if prefix is None:
        raise ValueError(
            f"{folder} has no TensorFlow checkpoint: looked for {CHECKPOINT_PREFIX}.index "
            "with .data-* files (or a single model.ckpt-N checkpoint)."
        )
    config_path = folder / CONFIG_FILE
    config = config_from_huggingface(read_huggingface_config(config_path), config_path)
    reader = _CheckpointReader(prefix)
    tensors = reader.stored_tensors()
    config.check_weights_hold(
        sum(int(np.prod(shape, dtype=np.int64)) for shape in tensors.shapes.values()),
        config_path,
        include_pooler=False,
    )
    class_name, task = _model_class(tensors, prefix)
    if "masked_lm_head" in model_class(class_name).head_layer_names:
        task = {
            "head_activation": config.activation,
            "head_layer_norm_epsilon": config.layer_norm_epsilon,
        }
    elif class_name == "BertClassifier":
        task.update(label_names=None, dropout=config.hidden_dropout)
    variables = bert_layout.model_variables(config, class_name, task.get("num_classes"))
    drawn = []
    if "bert/pooler/dense/kernel" not in tensors and class_name not in (
        "BertPretrainer",
        "BertClassifier",
    ):
        # Present in every released checkpoint; tasks that use it report it missing.
        logger.warning(
            "%s has no pooler variables: the pooler keeps its random initialisation.", prefix
        )
        drawn = [v for v in variables if v.path.startswith("backbone/pooler/")]
    weights = WEIGHTS.read(
        [v for v in variables if v not in drawn], tensors, config, against=CONFIG_FILE
    )
    generator = np.random.default_rng(np.random.randint(0, 2**31 - 1))
    weights.update({v.path: bert_layout.initial_value(v, config, generator) for v in drawn})
    reader.report_skipped()
    tensors.warn_unused()
    data = CheckpointData(
        class_name, config, weights, task, tokenizer=_read_tokenizer(folder, config, lowercase)
    )
    return data.logged_as_loaded(f"Google checkpoint {prefix}")


def lowercase_from_folder_name(folder):
    """True for "...uncased...", False for "...cased...", None when the name says neither."""
    name = pathlib.Path(folder).resolve().name.lower()
    if "uncased" in name:
        return True
    if "cased" in name:
        return False
    return None


def _read_tokenizer(folder, config, lowercase):
    vocabulary_path = folder / VOCABULARY_FILE
    if not vocabulary_path.is_file():
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
    vocabulary = read_vocabulary(vocabulary_path)
    if len(vocabulary) != config.vocabulary_size:
        logger.warning(
            "%s: %s has %d tokens but %s says vocab_size=%d.",
            folder,
            VOCABULARY_FILE,
            len(vocabulary),
            CONFIG_FILE,
            config.vocabulary_size,
        )
    return TokenizerData(vocabulary, {"lowercase": lowercase, "max_length": config.max_positions})
