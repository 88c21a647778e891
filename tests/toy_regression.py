"""A toy task a package could add: regression of one number per text.

Everything a new task needs, outside kbert: its model class (`BertRegressor`, a Dense
layer of one unit on the pooled [CLS] vector, mean squared error), its preprocessor
(the classifier's, which packs texts the same way), its fine-tuning recipe
(`RegressionRecipe`), and one row in each table (`MODEL_ROW`, `TASK_ROW`), which
`registered_toy_task` adds and takes out again.
"""

import contextlib
import dataclasses

import keras
import numpy as np

from kbert.data.examples import ClassificationExample
from kbert.finetuning.evaluation_predictions import EvaluationPredictions
from kbert.finetuning.fine_tuning_recipe import FineTuningRecipe
from kbert.finetuning.fine_tuning_recipe import model_limits
from kbert.finetuning.fine_tuning_recipe import predict_features
from kbert.finetuning.task_spec import TaskSpec
from kbert.finetuning.task_specs import TASK_SPECS
from kbert.finetuning.task_specs import register_task
from kbert.model_table import MODEL_CLASSES
from kbert.model_table import ModelClass
from kbert.model_table import register_model_class
from kbert.models import BertTask
from kbert.preprocessing.text_classifier_preprocessor import TextClassifierPreprocessor

PACKAGE = "kbert_toy"
TASK = "toy-regression"

MODEL_ROW = ModelClass(
    name="BertRegressor",
    module=__name__,
    package=PACKAGE,
    holds="a regression head",
    head_layers=(("regression_head", (("kernel", ("H", "1")), ("bias", ("1",)))),),
    inference_verb="regress",
    app_kind="regressor",
    app_tab="classify",
)
TASK_ROW = TaskSpec(
    name=TASK,
    title="Text regression",
    description="one number per text (CSV, TSV or JSON Lines)",
    data_kind="table",
    file_types=("csv", "tsv", "jsonl"),
    columns=(("text", "text"), ("label", "label")),
    head="BertRegressor",
    metrics=("negative_mse",),
    probe_fields=("text",),
    recipe=f"{__name__}:RegressionRecipe",
)


@keras.saving.register_keras_serializable(package=PACKAGE)
class BertRegressor(BertTask):
    """One number per text, from the pooled [CLS] vector.

    Args:
        backbone: a `BertBackbone`.
        dropout: dropout before the regression layer; defaults to the backbone's.
    """

    head_layer_names = ("regression_head",)
    preprocessor_class = TextClassifierPreprocessor
    fine_tuning_task = TASK

    def __init__(self, backbone, dropout=None, **kwargs):
        config = backbone.bert_config
        self.dropout = config.hidden_dropout if dropout is None else float(dropout)
        # === Layers ===
        head_dropout = keras.layers.Dropout(self.dropout, name="regression_dropout")
        head = keras.layers.Dense(1, dtype="float32", name="regression_head")
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        pooled = backbone(inputs)["pooled_output"]  # (B, H)
        outputs = head(head_dropout(pooled))  # (B, 1)
        self._finish_init(backbone, inputs, outputs, **kwargs)

    def regress(self, text):
        """The number the model gives `text`."""
        return float(self.predict([text], verbose=0)[0, 0])

    def default_loss(self):
        return keras.losses.MeanSquaredError()

    def default_metrics(self):
        return []

    def task_config(self):
        return {"dropout": self.dropout}


class RegressionRecipe(FineTuningRecipe):
    """Fine-tunes a `BertRegressor` on a table of texts and numbers.

    Args:
        text_column: column of the text.
        label_column: column of the number.
        format: "csv", "tsv" or "jsonl"; None detects it from the file name.
    """

    name = TASK
    metric = "negative_mse"
    example_class = ClassificationExample

    def __init__(self, text_column="text", label_column="label", format=None):
        self.text_column = text_column
        self.label_column = label_column
        self.format = format

    @property
    def model_class(self):
        return BertRegressor

    def read(self, path):
        from kbert.data import read_classification

        return read_classification(
            path, text_column=self.text_column, label_column=self.label_column, format=self.format
        )

    def table_example(self, values, label, row):
        return ClassificationExample(values["text"], None, str(label), row + 1)

    def features(self, examples, tokenizer, label_names, max_length):
        preprocessor = TextClassifierPreprocessor(tokenizer, max_length)
        features = preprocessor.features([example.text for example in examples])
        targets = np.array([float(example.label) for example in examples], np.float32)
        return dataclasses.replace(features, labels=targets)

    def evaluation_predictions(self, model, examples, max_length=None, batch_size=None):
        tokenizer, max_length = model_limits(model, max_length)
        features = self.features(examples, tokenizer, None, max_length)
        outputs = predict_features(model, features, tokenizer, max_length, batch_size)
        predicted = np.stack(outputs).reshape(-1)
        rows = tuple(
            {"index": index, "line": example.line, "text": example.text,
             "gold": float(example.label), "predicted": float(value)}
            for index, (example, value) in enumerate(zip(examples, predicted))
        )
        error = float(np.mean((predicted - features.labels) ** 2))
        columns = ("index", "line", "text", "gold", "predicted")
        return EvaluationPredictions(self.name, columns, rows, {"negative_mse": -error})


@contextlib.contextmanager
def registered_toy_task():
    """The toy task's rows in the model table and the task table, for the block."""
    register_model_class(MODEL_ROW)
    try:
        register_task(TASK_ROW)
        try:
            yield
        finally:
            del TASK_SPECS[TASK_ROW.name]
    finally:
        del MODEL_CLASSES[MODEL_ROW.name]
