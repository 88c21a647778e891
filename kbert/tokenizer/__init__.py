"""BERT's WordPiece tokenizer with character offsets."""

from kbert.tokenizer.bert_tokenizer import BertTokenizer
from kbert.tokenizer.encoding import Encoding

__all__ = ["BertTokenizer", "Encoding"]
