import keras
from keras import ops

from kbert.layers.host_truncated_normal import HostTruncatedNormal
from kbert.models.bert_task import BertTask
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

    def __init__(self, backbone, **kwargs):
        config = backbone.bert_config
        # === Layers ===
        span_head = keras.layers.Dense(
            2,
            kernel_initializer=HostTruncatedNormal(stddev=config.initializer_range),
            dtype="float32",
            name="span_head",
        )
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        logits = span_head(backbone(inputs)["sequence_output"])  # (B, L, 2)
        outputs = {
            "start_logits": ops.take(logits, 0, axis=-1),
            "end_logits": ops.take(logits, 1, axis=-1),
        }
        self._finish_init(backbone, inputs, outputs, **kwargs)

    def answer(
        self,
        question,
        context,
        top_k=1,
        max_answer_length=30,
        doc_stride=128,
        max_length=384,
        max_question_length=64,
        null_threshold=None,
        tokenizer=None,
        batch_size=32,
    ):
        """The best answer spans to `question` in `context`, of any length.

        See `kbert.inference.answer` for the details.

        Args:
            question: the question string.
            context: the context string (long ones are windowed).
            top_k: number of answers, best first.
            max_answer_length: the longest answer, in tokens.
            doc_stride: context tokens between the starts of consecutive windows.
            max_length: tokens per window, capped at the model's `max_positions`.
            max_question_length: longer questions are truncated with a warning.
            null_threshold: None always answers; a number answers "no answer"
                when the `[CLS]` score beats the best span by more than it.
            tokenizer: overrides `self.tokenizer`.
            batch_size: windows per forward pass.

        Returns:
            A `kbert.inference.AnswerResult`; each answer satisfies
            `context[answer.start:answer.end] == answer.text`.

        Examples:

        >>> model = BertQuestionAnswerer.from_preset("path/to/preset")
        >>> model.answer("Who sat?", "The cat sat.").answers[0].text
        'The cat'
        """
        from kbert.inference.question_answering import answer

        return answer(
            self,
            tokenizer,
            question,
            context,
            top_k=top_k,
            max_answer_length=max_answer_length,
            doc_stride=doc_stride,
            max_length=max_length,
            max_question_length=max_question_length,
            null_threshold=null_threshold,
            batch_size=batch_size,
        )

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
