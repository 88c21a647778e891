"""The BERT backbone and the task models that wrap it, built from checkpoints' plain data.

Every model loads with `cls.from_preset(source, dtype=None, load_weights=True, ...)` from
any model source (`kbert.presets.resolve_preset`); `BertTask.from_preset` gives the task a
preset holds. `BertConfig` (from `kbert.architecture`) is named here too, as the argument
of `BertBackbone.from_config_object`.

May import `kbert.training` (optimizer, metrics), `kbert.inference`, `kbert.preprocessing`,
`kbert.layers`, `kbert.tokenizer`, `kbert.presets`, `kbert.checkpoints`, `kbert.architecture`.
"""

from kbert.optional_packages import require_backend

# A missing backend is one sentence naming its extra, before Keras imports it.
require_backend()

from kbert.architecture.bert_config import BertConfig
from kbert.models.bert_backbone import BertBackbone
from kbert.models.bert_classifier import BertClassifier
from kbert.models.bert_masked_lm import BertMaskedLM
from kbert.models.bert_multiple_choice import BertMultipleChoice
from kbert.models.bert_pretrainer import BertPretrainer
from kbert.models.bert_question_answerer import BertQuestionAnswerer
from kbert.models.bert_task import BertTask
from kbert.models.bert_token_classifier import BertTokenClassifier

__all__ = [
    "BertBackbone",
    "BertClassifier",
    "BertConfig",
    "BertMaskedLM",
    "BertMultipleChoice",
    "BertPretrainer",
    "BertQuestionAnswerer",
    "BertTask",
    "BertTokenClassifier",
]
