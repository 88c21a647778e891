"""kbert: BERT for Keras 3 on JAX, TensorFlow and PyTorch.

The public names are imported lazily so that `import kbert` (and the `kbert` command's
`--help`) stays fast; Keras and the backend load on first use of a model class.
"""

from kbert.lazy_imports import lazy_attributes

__version__ = "0.1.0"

_PUBLIC_NAMES = {
    "BertConfig": "kbert.architecture.bert_config",
    "BertBackbone": "kbert.models.bert_backbone",
    "BertPretrainer": "kbert.models.bert_pretrainer",
    "BertMaskedLM": "kbert.models.bert_masked_lm",
    "BertClassifier": "kbert.models.bert_classifier",
    "BertTokenClassifier": "kbert.models.bert_token_classifier",
    "BertQuestionAnswerer": "kbert.models.bert_question_answerer",
    "BertTask": "kbert.models.bert_task",
    "BertTokenizer": "kbert.tokenizer.bert_tokenizer",
    "load_task": "kbert.models.bert_task",
    "resolve_preset": "kbert.presets.model_source",
}

__all__ = sorted(_PUBLIC_NAMES) + ["__version__"]
__getattr__, __dir__ = lazy_attributes(__name__, _PUBLIC_NAMES)
