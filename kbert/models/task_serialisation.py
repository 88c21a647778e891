"""A task model as Keras config and assets (a `.keras` file keeps the tokenizer), as a
preset folder and as plain checkpoint data."""

import pathlib

import keras

from kbert.models.bert_backbone import BertBackbone


class TaskSerialisation:
    """`get_config`/`from_config`, Keras assets, preset saving and checkpoint data of a
    `BertTask`.

    A mixin of `BertTask`, before `keras.Model` among its bases: it reads the task's
    `backbone`, `_preprocessor`, `tokenizer` and `freshly_initialized_heads`, and
    `task_config()`, which tasks override with their constructor arguments. Loading a
    preset is `BertTask.from_preset`.
    """

    def task_config(self):
        """The constructor arguments of this task other than the backbone."""
        return {}

    def get_config(self):
        config = {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            **self.task_config(),
        }
        if self._preprocessor is not None:
            # The tokenizer itself travels as assets of the `.keras` file (`save_assets`).
            config["preprocessor"] = self._preprocessor.get_config()
        if self.freshly_initialized_heads:
            config["freshly_initialized_heads"] = list(self.freshly_initialized_heads)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        backbone = config.pop("backbone")
        preprocessor_config = config.pop("preprocessor", None)
        untrained = config.pop("freshly_initialized_heads", [])
        if isinstance(backbone, dict):
            backbone = keras.saving.deserialize_keras_object(
                backbone, custom_objects={"BertBackbone": BertBackbone}
            )
        model = cls(backbone=backbone, **config)
        model._preprocessor_config = preprocessor_config or {}
        model.freshly_initialized_heads = list(untrained)
        return model

    def save_assets(self, dir_path):
        """Keras saving: writes the tokenizer's files (`vocab.txt`, its settings)."""
        if self.tokenizer is not None:
            self.tokenizer.save_to_preset(dir_path)

    def load_assets(self, dir_path):
        """Keras loading: the tokenizer (and preprocessor) back from `save_assets`' files."""
        from kbert.checkpoints.tokenizer_files import VOCABULARY_FILE
        from kbert.tokenizer.bert_tokenizer import BertTokenizer

        if (pathlib.Path(dir_path) / VOCABULARY_FILE).is_file():
            tokenizer = BertTokenizer.from_preset(pathlib.Path(dir_path))
            self._preprocessor = self.make_preprocessor(tokenizer, **self._preprocessor_config)

    def save_to_preset(self, folder, tokenizer=None, metadata=None):
        """Writes backbone, head, task config and tokenizer as a preset folder.

        `tokenizer` defaults to the task's own `.tokenizer`.
        """
        from kbert.models.preset_saving import save_preset

        save_preset(
            self,
            folder,
            tokenizer=tokenizer if tokenizer is not None else self.tokenizer,
            metadata=metadata,
        )

    def to_checkpoint_data(self, tokenizer=None):
        """This task as plain data, for `kbert.checkpoints`' writers and exports.

        `tokenizer` defaults to the task's own `.tokenizer`.
        """
        from kbert.models.preset_saving import checkpoint_data

        return checkpoint_data(self, tokenizer if tokenizer is not None else self.tokenizer)
