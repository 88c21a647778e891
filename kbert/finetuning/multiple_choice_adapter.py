"""Multiple choice (SWAG): the right ending of a context, scored per ending from [CLS]."""

import numpy as np

from kbert.finetuning.fine_tuning_adapter import FineTuningAdapter
from kbert.finetuning.fine_tuning_adapter import model_limits
from kbert.finetuning.fine_tuning_adapter import predict_features
from kbert.metrics import accuracy
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.preprocessing.multiple_choice_preprocessor import MultipleChoicePreprocessor


class MultipleChoiceAdapter(FineTuningAdapter):
    """Multiple choice on SWAG's CSV or JSON Lines (see `kbert.data.read_multiple_choice`).

    The label of an example is the index of its right ending; the model has no label
    names. Every example of one file has the same number of endings.

    Args:
        format: "csv" or "jsonl"; None detects it from the file name.
        metric: the score that selects the best checkpoint: "accuracy".
    """

    name = "multiple-choice"

    def __init__(self, format=None, metric="accuracy"):
        if metric != "accuracy":
            raise ValueError(f"`metric` must be 'accuracy'. Received: metric={metric!r}")
        self.format = format
        self.metric = metric

    @property
    def model_class(self):
        from kbert.models.bert_multiple_choice import BertMultipleChoice

        return BertMultipleChoice

    def read(self, path):
        from kbert.data import read_multiple_choice

        return read_multiple_choice(path, format=self.format)

    def label_names(self, examples, source="the training data"):
        """None (the labels are ending indices), after checking every example has one."""
        self.check_labelled(examples, source)
        return None

    def check_labelled(self, examples, source):
        """Raises ValueError naming the first example without a label."""
        if not examples:
            raise ValueError(f"{source} has no examples.")
        for example in examples:
            if example.label is None:
                raise ValueError(
                    f"{source}, line {example.line}: the example has no label; every "
                    "example needs the index of its right ending."
                )

    def features(self, examples, tokenizer, label_names, max_length):
        preprocessor = MultipleChoicePreprocessor(tokenizer, max_length)
        x = {
            "context": [example.context for example in examples],
            "endings": [list(example.endings) for example in examples],
        }
        labelled = all(example.label is not None for example in examples)
        return preprocessor.features(x, [example.label for example in examples] if labelled else None)

    def evaluate(self, model, examples, max_length=None, batch_size=DEFAULT_BATCH_SIZE):
        """The accuracy of `model` (the share of examples whose right ending scores highest)."""
        self.check_labelled(examples, "the evaluation data")
        tokenizer, max_length = model_limits(model, max_length)
        features = self.features(examples, tokenizer, None, max_length)
        logits = predict_features(model, features, tokenizer, max_length, batch_size)
        predicted = [int(np.argmax(row)) for row in logits]
        return {"accuracy": accuracy([example.label for example in examples], predicted)}

    def options(self):
        return {"task": self.name, "metric": self.metric}
