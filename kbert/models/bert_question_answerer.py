import keras
from keras import ops

from kbert.inference.question_answering import answer
from kbert.models.float32_outputs import float32_logits
from kbert.models.bert_task import BertTask
from kbert.models.head_dense import head_dense
from kbert.models.inference_method import InferenceMethod
from kbert.preprocessing.question_answerer_preprocessor import QuestionAnswererPreprocessor


@keras.saving.register_keras_serializable(package="kbert")
class BertQuestionAnswerer(BertTask):
    """Extractive question answering: a start and an end score for every token.

    Inputs: the backbone's dict for `[CLS] question [SEP] context [SEP]`, or, in
    `fit`/`evaluate`/`predict`, `{"question": [...], "context": [...]}` with answers
    `{"text", "answer_start"}` (or None) as labels (see `QuestionAnswererPreprocessor`).
    Outputs: dict with float32 `start_logits` and `end_logits`, each (B, L). Position 0
    ([CLS]) stands for "no answer" in SQuAD 2.0 training, as in BERT.

    Args:
        backbone: a `BertBackbone`.
    """

    head_layer_names = ("span_head",)
    preprocessor_class = QuestionAnswererPreprocessor
    fine_tuning_task = "qa"
    # `model.answer(...)` is `kbert.inference.answer(model, model.tokenizer, ...)`.
    answer = InferenceMethod(answer)

    def __init__(self, backbone, **kwargs):
        # === Layers ===
        span_head = head_dense(backbone, 2, name="span_head")
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        logits = float32_logits(span_head(backbone(inputs)["sequence_output"]))  # (B, L, 2)
        outputs = {
            "start_logits": ops.take(logits, 0, axis=-1),
            "end_logits": ops.take(logits, 1, axis=-1),
        }
        self._finish_init(backbone, inputs, outputs, **kwargs)

    def default_loss(self):
        return {
            "start_logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            "end_logits": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        }

    def default_metrics(self):
        return {
            "start_logits": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
            "end_logits": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
        }
