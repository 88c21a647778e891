"""The BERT backbone and the task models that wrap it, built from checkpoints' plain data.

`BertConfig` (from `kbert.architecture`) is re-exported here; `load_checkpoint` builds the
model of any checkpoint folder or model source.
"""

from kbert.architecture.bert_config import BertConfig
from kbert.models.bert_backbone import BertBackbone
from kbert.models.bert_classifier import BertClassifier
from kbert.models.bert_masked_lm import BertMaskedLM
from kbert.models.bert_pretrainer import BertPretrainer
from kbert.models.bert_question_answerer import BertQuestionAnswerer
from kbert.models.bert_task import BertTask
from kbert.models.bert_task import load_task
from kbert.models.bert_token_classifier import BertTokenClassifier
from kbert.models.preset_loading import load_checkpoint

__all__ = [
    "BertBackbone",
    "BertClassifier",
    "BertConfig",
    "BertMaskedLM",
    "BertPretrainer",
    "BertQuestionAnswerer",
    "BertTask",
    "BertTokenClassifier",
    "load_checkpoint",
    "load_task",
]
