import keras
import numpy as np

from kbert.inference.multiple_choice import choose
from kbert.layers.choice_rows import ChoiceRows
from kbert.layers.choice_scores import ChoiceScores
from kbert.models.float32_outputs import float32_logits
from kbert.models.bert_task import BertTask
from kbert.models.head_dense import head_dense
from kbert.models.inference_method import InferenceMethod
from kbert.models.input_validation import MODEL_INPUTS
from kbert.models.input_validation import validate_choice_inputs
from kbert.preprocessing.multiple_choice_preprocessor import MIN_CHOICES
from kbert.preprocessing.multiple_choice_preprocessor import MultipleChoicePreprocessor


@keras.saving.register_keras_serializable(package="kbert")
class BertMultipleChoice(BertTask):
    """Multiple choice (SWAG): one score per candidate ending of a context.

    Every (context, ending) pair is encoded as `[CLS] context [SEP] ending [SEP]`; its
    pooled `[CLS]` vector goes through dropout and one learned vector (a dense layer
    of one unit), and the scores of an example's endings are its logits, softmaxed
    over the endings by the loss (BERT paper, §4.4; transformers'
    `BertForMultipleChoice`).

    Inputs: dict of int tensors `token_ids`, `segment_ids`, `padding_mask`, each
    (B, C, L) with C >= 2 choices (any number per call; the encoder runs on the
    B * C rows), or, in `fit`/`evaluate`/`predict`, raw text
    `{"context": [...], "endings": [[...], ...]}` with the index of the right ending
    as the label (see `MultipleChoicePreprocessor`).
    Outputs: float32 logits (B, C).

    Args:
        backbone: a `BertBackbone`.
        dropout: dropout before the scoring layer; defaults to the backbone's
            `hidden_dropout`, as in BERT.

    Example:

    >>> model = BertMultipleChoice.from_preset("runs/swag/model")
    >>> model.choose("She opened the door", ["and walked out.", "the banana sang."]).ending
    'and walked out.'
    """

    head_layer_names = ("choice_head",)
    preprocessor_class = MultipleChoicePreprocessor
    fine_tuning_task = "multiple-choice"
    # `model.choose(...)` is `kbert.inference.choose(model, model.tokenizer, ...)`.
    choose = InferenceMethod(choose)

    def __init__(self, backbone, dropout=None, **kwargs):
        config = backbone.bert_config
        self.dropout = config.hidden_dropout if dropout is None else float(dropout)
        # === Layers ===
        policy = backbone.dtype_policy
        choice_rows = ChoiceRows(dtype=policy, name="choice_rows")
        choice_dropout = keras.layers.Dropout(self.dropout, dtype=policy, name="choice_dropout")
        choice_head = head_dense(backbone, 1, name="choice_head")
        choice_scores = ChoiceScores(dtype=policy, name="choice_scores")
        # === Functional model ===
        inputs = {
            name: keras.Input(shape=(None, None), dtype="int32", name=name)
            for name in MODEL_INPUTS
        }  # each (B, C, L)
        rows = {name: choice_rows(value) for name, value in inputs.items()}  # (B*C, L)
        pooled = backbone(rows)["pooled_output"]  # (B*C, H)
        scores = choice_head(choice_dropout(pooled))  # (B*C, 1)
        logits = float32_logits(choice_scores(scores, inputs["token_ids"]))  # (B, C)
        self._finish_init(backbone, inputs, logits, **kwargs)

    def __call__(self, inputs, *args, **kwargs):
        validate_choice_inputs(inputs, self.backbone.bert_config, MIN_CHOICES)
        return keras.Model.__call__(self, inputs, *args, **kwargs)

    def _validate_data(self, x):
        if isinstance(x, (dict, np.ndarray)):
            validate_choice_inputs(x, self.backbone.bert_config, MIN_CHOICES)

    def task_config(self):
        return {"dropout": self.dropout}
