"""Inference on BERT task models, with results carrying character offsets.

Every function takes `(model, tokenizer, inputs, ...)`: a model (duck-typed: anything
with `predict_on_batch` and a `bert_config`, so this package does not import
`kbert.models`), its tokenizer (None: `model.tokenizer`), then what to run on. The
task models carry them as methods made from these functions (`BertMaskedLM.fill_mask`,
`BertQuestionAnswerer.answer`, `BertClassifier.classify`, `BertTokenClassifier.tag`,
`BertMultipleChoice.choose`, `saliency` on classifiers and taggers, and `embed` on every
task; `kbert.models.inference_method`), with the same arguments and defaults. `embed`
takes a backbone or any task model and returns hidden-state features; `saliency` scores
each word-piece of a text for a classifier's label or a tagger's entity (occlusion,
gradient x input, integrated gradients). A batch size left out is
`kbert.inference.model_io.inference_batch_size()`: 8 texts per forward pass on a CPU,
`kbert.preprocessing.DEFAULT_BATCH_SIZE` (32) on a GPU or TPU (`saliency` and word
scores batch by `DEFAULT_BATCH_SIZE` everywhere). On a CPU with onnxruntime installed,
`engine="auto"` runs a model's cached ONNX graph (`kbert.inference.inference_engine`).

Texts are sorted by token length and batched; each batch is padded to its own
length bucket (`INFERENCE_LENGTH_BUCKETS`: padding within `inference_padding_bound`)
and row bucket, so a compiled forward pass is reused across inputs of similar length;
results come back in the caller's order.
"""

from kbert.optional_packages import require_backend

# A missing backend is one sentence naming its extra, before Keras imports it.
require_backend()

from kbert.inference.attention_map import AttentionMap
from kbert.inference.attention_map import attention_map
from kbert.inference.classification import classify
from kbert.inference.embedding import embed
from kbert.inference.fill_mask import fill_mask
from kbert.inference.multiple_choice import choose
from kbert.inference.question_answering import answer
from kbert.inference.results import AnswerResult
from kbert.inference.results import AnswerSpan
from kbert.inference.results import Choice
from kbert.inference.results import Classification
from kbert.inference.results import EntitySpan
from kbert.inference.results import FillMaskResult
from kbert.inference.results import MaskFill
from kbert.inference.results import MaskPrediction
from kbert.inference.results import MaskWordScores
from kbert.inference.results import TokenEmbeddings
from kbert.inference.results import WordScore
from kbert.inference.saliency import saliency
from kbert.inference.span_probabilities import SpanProbabilities
from kbert.inference.span_probabilities import span_probabilities
from kbert.inference.token_saliency import TokenSaliency
from kbert.inference.token_tagging import tag
from kbert.inference.word_scores import score_words
from kbert.preprocessing.length_buckets import DEFAULT_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import INFERENCE_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import bucket_length
from kbert.preprocessing.length_buckets import length_buckets
from kbert.preprocessing.length_buckets import pad_to_bucket

__all__ = [
    "AnswerResult",
    "AnswerSpan",
    "AttentionMap",
    "Choice",
    "Classification",
    "DEFAULT_LENGTH_BUCKETS",
    "INFERENCE_LENGTH_BUCKETS",
    "EntitySpan",
    "FillMaskResult",
    "MaskFill",
    "MaskPrediction",
    "MaskWordScores",
    "SpanProbabilities",
    "TokenEmbeddings",
    "TokenSaliency",
    "WordScore",
    "answer",
    "attention_map",
    "bucket_length",
    "choose",
    "classify",
    "embed",
    "fill_mask",
    "length_buckets",
    "pad_to_bucket",
    "saliency",
    "score_words",
    "span_probabilities",
    "tag",
]
