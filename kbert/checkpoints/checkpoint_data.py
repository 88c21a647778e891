"""A model as plain data: what every checkpoint format reads into and writes from."""

import dataclasses
import logging

from kbert.architecture import bert_layout
from kbert.model_table import model_class

logger = logging.getLogger("kbert.checkpoints")


@dataclasses.dataclass
class CheckpointData:
    """A kbert model without Keras: its class, config, weights by path and tokenizer.

    What a kbert preset folder holds, and what every other format converts to and from
    (`kbert.checkpoints`). `kbert.models` builds the model; nothing here needs Keras.

    Attributes:
        class_name: the kbert model class, a row of `kbert.model_table.MODEL_CLASSES`
            ("BertBackbone", "BertClassifier", ...).
        config: the backbone's `kbert.architecture.BertConfig`.
        weights: `{kbert preset path: float32 np.ndarray}`, paths as in
            `bert_layout.model_variables` ("backbone/...", "head/...").
        task: the task's constructor arguments (`num_classes`, `label_names`, `dropout`,
            `head_activation`, ...), as a preset's `config.json` stores them.
        tokenizer: a `TokenizerData`, or None.
        untrained_heads: head layers saved as initialised, never trained.
        registered_name: the exact class the model was saved from, as Keras' registry
            names it ("my_package>MyClassifier"), when it is not kbert's own class.
    """

    class_name: str
    config: object
    weights: dict
    task: dict = dataclasses.field(default_factory=dict)
    tokenizer: object = None
    untrained_heads: tuple = ()
    registered_name: str = None

    @property
    def num_classes(self):
        """The classes of a classifier head (from `num_classes`, else `label_names`), or None."""
        if self.task.get("num_classes") is not None:
            return self.task["num_classes"]
        labels = self.task.get("label_names")
        return len(labels) if labels else None

    def variables(self):
        """Every variable the model has (`bert_layout.model_variables`)."""
        num_classes = self.num_classes if model_class(self.class_name).has_class_head else None
        return bert_layout.model_variables(self.config, self.class_name, num_classes)

    def require_weights(self, variables, action="export"):
        """Refuses to `action` the model when it lacks a weight of `variables`."""
        missing = [variable.path for variable in variables if variable.path not in self.weights]
        if missing:
            raise ValueError(
                f"Cannot {action} the {self.class_name}: it lacks the weights {missing}."
            )

    def parameter_count(self):
        return sum(int(value.size) for value in self.weights.values())

    def logged_as_loaded(self, source):
        """This data, once an INFO line has said what was loaded: "Loaded `source` as
        <class name> (<n> parameters)."."""
        logger.info(
            "Loaded %s as %s (%d parameters).", source, self.class_name, self.parameter_count()
        )
        return self
