import keras

from kbert.layers.host_truncated_normal import HostTruncatedNormal
from kbert.models.bert_task import BertTask
from kbert.preprocessing.text_classifier_preprocessor import TextClassifierPreprocessor


@keras.saving.register_keras_serializable(package="kbert")
class BertClassifier(BertTask):
    """Classifies one text or a text pair from the pooled [CLS] representation.

    Inputs: the backbone's dict (a pair is packed by the tokenizer with segment ids),
    or, in `fit`/`evaluate`/`predict`, raw texts: a list of strings, `(texts, pairs)`,
    or a dict with "text" and "pair" (see `TextClassifierPreprocessor`); labels may be
    class ids or, with `label_names`, label strings.
    Outputs: float32 logits (B, num_classes).

    Args:
        backbone: a `BertBackbone`.
        num_classes: number of labels. May be omitted when `label_names` is given.
        label_names: optional list of label strings, index = class id.
        dropout: dropout before the classification layer; defaults to the backbone's
            `hidden_dropout`, as in BERT.
    """

    head_layer_names = ("classifier_head",)
    preprocessor_class = TextClassifierPreprocessor
    fine_tuning_task = "classification"

    def __init__(self, backbone, num_classes=None, label_names=None, dropout=None, **kwargs):
        num_classes, label_names = _resolve_labels(num_classes, label_names)
        config = backbone.bert_config
        dropout = config.hidden_dropout if dropout is None else dropout
        # === Layers ===
        dropout_layer = keras.layers.Dropout(dropout, name="classifier_dropout")
        classifier_head = keras.layers.Dense(
            num_classes,
            kernel_initializer=HostTruncatedNormal(stddev=config.initializer_range),
            dtype="float32",
            name="classifier_head",
        )
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        pooled = backbone(inputs)["pooled_output"]
        outputs = classifier_head(dropout_layer(pooled))
        self._finish_init(backbone, inputs, outputs, **kwargs)
        # === Config ===
        self.num_classes = num_classes
        self.label_names = label_names
        self.dropout = dropout

    def classify(self, text_or_texts, pairs=None, tokenizer=None, batch_size=32):
        """Label probabilities for one or several texts (or text pairs).

        See `kbert.inference.classify` for the details.

        Args:
            text_or_texts: a string or a list of strings.
            pairs: None, or the second text of each pair (string or list).
            tokenizer: overrides `self.tokenizer`.
            batch_size: texts per forward pass.

        Returns:
            A `kbert.inference.Classification` for a string, a list for a list;
            labels are `label_names`, else "0", "1", ...

        Examples:

        >>> model = BertClassifier.from_preset("path/to/preset")
        >>> model.classify("A wonderful film.").label
        'positive'
        """
        from kbert.inference.classification import classify

        return classify(self, tokenizer, text_or_texts, pairs=pairs, batch_size=batch_size)

    def preprocessor_arguments(self):
        return {"label_names": self.label_names, "num_classes": self.num_classes}

    def task_config(self):
        return {
            "num_classes": self.num_classes,
            "label_names": self.label_names,
            "dropout": self.dropout,
        }


# The most classes a head may have: far beyond any classification or tagging task, it
# refuses a preset asking for a 10^9-wide head before the head is built.
MAX_CLASSES = 100_000


def _resolve_labels(num_classes, label_names):
    """Checks `num_classes` against `label_names`; returns both (names may be None)."""
    if label_names is not None:
        label_names = [str(name) for name in label_names]
        if len(set(label_names)) != len(label_names):
            raise ValueError(
                f"`label_names` must be unique. Received: label_names={label_names}"
            )
        if num_classes is None:
            num_classes = len(label_names)
        elif num_classes != len(label_names):
            raise ValueError(
                "`num_classes` must equal len(label_names). Received: "
                f"num_classes={num_classes}, label_names={label_names}"
            )
    if num_classes is None:
        raise ValueError("`num_classes` (or `label_names`) is required. Received: None")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(
            f"`num_classes` must be a positive integer. Received: num_classes={num_classes!r}"
        )
    if num_classes > MAX_CLASSES:
        raise ValueError(
            f"`num_classes` must be at most {MAX_CLASSES}. Received: num_classes={num_classes!r}"
        )
    return num_classes, label_names
