"""The base of the task models whose head gives one logit per label."""

from kbert.models.bert_task import BertTask
from kbert.models.label_head import LabelHead


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

    def __init__(self, backbone, num_classes=None, label_names=None, dropout=None, **kwargs):
        head = LabelHead(backbone, num_classes, label_names, dropout, name=self.head_name)
        # === Functional model ===
        inputs = self._task_inputs(backbone)
        outputs = head(backbone(inputs)[self.head_input])
        self._finish_init(backbone, inputs, outputs, **kwargs)
        # === Config ===
        self.num_classes, self.label_names, self.dropout = head.config()

    def preprocessor_arguments(self):
        return {"label_names": self.label_names, "num_classes": self.num_classes}

    def task_config(self):
        return {
            "num_classes": self.num_classes,
            "label_names": self.label_names,
            "dropout": self.dropout,
        }
