"""Building blocks of the BERT encoder: keras.ops only, no backend branches."""

from kbert.layers.bert_embeddings import BertEmbeddings
from kbert.layers.bert_encoder_block import BertEncoderBlock
from kbert.layers.bert_pooler import BertPooler
from kbert.layers.bert_self_attention import BertSelfAttention
from kbert.layers.host_truncated_normal import HostTruncatedNormal
from kbert.layers.masked_lm_head import MaskedLMHead

__all__ = [
    "BertEmbeddings",
    "BertEncoderBlock",
    "BertPooler",
    "BertSelfAttention",
    "HostTruncatedNormal",
    "MaskedLMHead",
]
