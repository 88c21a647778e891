"""Building blocks of the BERT encoder, written in keras.ops.

One module branches on the backend: `attention_dispatch`, which reaches the backend's
fused attention kernel (cuDNN on JAX GPUs, `scaled_dot_product_attention` on PyTorch)
and XLA's attention elsewhere. Every other layer is backend-agnostic keras.ops.
"""

from kbert.optional_packages import require_backend

# A missing backend is one sentence naming its extra, before Keras imports it.
require_backend()

from kbert.layers.bert_embeddings import BertEmbeddings
from kbert.layers.bert_encoder_block import BertEncoderBlock
from kbert.layers.bert_pooler import BertPooler
from kbert.layers.bert_self_attention import BertSelfAttention
from kbert.layers.choice_rows import ChoiceRows
from kbert.layers.choice_scores import ChoiceScores
from kbert.layers.host_truncated_normal import HostTruncatedNormal
from kbert.layers.masked_lm_head import MaskedLMHead

__all__ = [
    "BertEmbeddings",
    "BertEncoderBlock",
    "BertPooler",
    "BertSelfAttention",
    "ChoiceRows",
    "ChoiceScores",
    "HostTruncatedNormal",
    "MaskedLMHead",
]
