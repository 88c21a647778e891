"""The base of the task models whose head gives one logit per label."""

from kbert.inference.saliency import saliency
from kbert.models.bert_task import BertTask
from kbert.models.inference_method import InferenceMethod
from kbert.models.label_head import LabelHead
from kbert.models.token_vectors_view import TokenVectorsView
from kbert.preprocessing.data_forms import table_label_names


class LabelTask(BertTask):
    """A `BertTask` whose head is a `LabelHead` on one output of the backbone.

    `BertClassifier` reads the pooled `[CLS]` vector, `BertTokenClassifier` every
    token's; both take the same arguments and keep the same config.

    Subclasses set `head_input` (the backbone output the head reads) and `head_name`
    (the prefix of its layer names, which the checkpoint formats map), and document
    the arguments (`backbone`, `num_classes`, `label_names`, `dropout`; see
    `LabelHead`) in their own words.
    """

    head_input = None
    head_name = None
    # `model.saliency(text, ...)` is `kbert.inference.saliency(model, model.tokenizer, ...)`.
    saliency = InferenceMethod(saliency)

    def __init__(self, backbone, num_classes=None, label_names=None, dropout=None, **kwargs):
        head = LabelHead(backbone, num_classes, label_names, dropout, name=self.head_name)
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        outputs = head(backbone(inputs)[self.head_input])
        self._finish_init(backbone, inputs, outputs, **kwargs)
        # === Config ===
        self.num_classes, self.label_names, self.dropout = head.config()

    def with_token_vectors(self):
        """A `TokenVectorsView` of this model: its logits from token vectors, not ids.

        Built once and cached (stored untracked: tracking it would make the model its
        own grandchild), so compiled gradient functions are reused across calls.
        """
        view = self.__dict__.get("_token_vectors_view")
        if view is None:
            view = TokenVectorsView(self, name=f"{self.name}_from_token_vectors")
            self.__dict__["_token_vectors_view"] = view.build_symbolically()
        return view

    def _adopt_label_names(self, x, y):
        """A model without label names takes those of a `datasets` `ClassLabel` label
        column, so that `classify` says "spam" where it said "1"."""
        if self.label_names is not None or self._preprocessor is None:
            return
        names = table_label_names(x, y, self._preprocessor.record_fields)
        if names is None:
            return
        if len(names) != self.num_classes:
            raise ValueError(
                f"The dataset's label column is a ClassLabel of {len(names)} names {names}; "
                f"the model has num_classes={self.num_classes}. Build the model with "
                "label_names=<the ClassLabel's names>."
            )
        self.label_names = names
        self._preprocessor.label_names = names

    def preprocessor_arguments(self):
        return {"label_names": self.label_names, "num_classes": self.num_classes}

    def task_config(self):
        return {
            "num_classes": self.num_classes,
            "label_names": self.label_names,
            "dropout": self.dropout,
        }
