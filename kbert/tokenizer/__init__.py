"""BERT's WordPiece tokenizer with character offsets."""

from kbert.tokenizer.bert_tokenizer import BertTokenizer
from kbert.tokenizer.encoding import Encoding
from kbert.tokenizer.tokenized_text import TokenizedText

__all__ = ["BertTokenizer", "Encoding", "TokenizedText"]
