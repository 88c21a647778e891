"""What a BERT is, without Keras: its hyperparameters and the layout of its weights.

- `BertConfig`: every hyperparameter, validated, with the published sizes by name.
- `bert_layout`: every kbert variable (preset path, shape) of a model with a given
  config and task head; the one place the layout is walked.

Importing this package imports neither Keras nor any other kbert package but
`kbert.files`: checkpoint formats, the CLI and the app read configs and shapes through it.
"""

from kbert.architecture.bert_config import BERT_SIZES
from kbert.architecture.bert_config import BertConfig
from kbert.architecture.bert_layout import backbone_variables
from kbert.architecture.bert_layout import head_variables
from kbert.architecture.bert_layout import model_variables
from kbert.architecture.layout_variable import LayoutVariable

__all__ = [
    "BERT_SIZES",
    "BertConfig",
    "LayoutVariable",
    "backbone_variables",
    "head_variables",
    "model_variables",
]
