"""A tokenizer read from and written to files: `vocab.txt`, Hugging Face's
`tokenizer.json`, preset folders and any model source."""

import os
import pathlib

from kbert.checkpoints.tokenizer_data import TokenizerData
from kbert.checkpoints.tokenizer_files import read_tokenizer_folder
from kbert.checkpoints.tokenizer_files import read_tokenizer_json
from kbert.checkpoints.tokenizer_files import write_tokenizer_folder


class TokenizerPresets:
    """Construction of a `BertTokenizer` from files, and its preset files.

    A mixin of `BertTokenizer`: the constructors build `cls` from a vocabulary and
    the settings of `get_config()`; the file formats live in
    `kbert.checkpoints.tokenizer_files`.
    """

    @classmethod
    def from_vocabulary_file(cls, path, **settings):
        """Creates a tokenizer from a `vocab.txt` file.

        Args:
            path: path to the vocabulary file, one token per line.
            **settings: other constructor arguments (`lowercase`, ...).

        Returns:
            A `BertTokenizer`.

        Examples:

        >>> tokenizer = BertTokenizer.from_vocabulary_file("vocab.txt", lowercase=False)
        """
        if not isinstance(path, (str, os.PathLike)):
            raise ValueError(
                f"`path` must be a path to a vocabulary file. Received: path={path!r}"
            )
        return cls(pathlib.Path(path), **settings)

    @classmethod
    def from_huggingface_tokenizer_json(cls, path):
        """Creates a tokenizer from a Hugging Face `tokenizer.json`.

        The file must hold a WordPiece model. Lower-casing, accent stripping
        and CJK splitting are read from its `BertNormalizer`; `[CLS]`/`[SEP]`
        from its post-processor; `max_length` and the remaining special tokens
        from a `tokenizer_config.json` beside it, when there is one (see
        `kbert.checkpoints.tokenizer_files.read_tokenizer_json`).

        Args:
            path: the `tokenizer.json` file, or a folder holding one.

        Returns:
            A `BertTokenizer`.

        Examples:

        >>> tokenizer = BertTokenizer.from_huggingface_tokenizer_json("bert-base-uncased/")
        """
        return cls.from_tokenizer_data(read_tokenizer_json(path))

    @classmethod
    def from_preset(cls, preset):
        """Creates a tokenizer from a preset folder or any model source.

        The folder holds `vocab.txt` plus `tokenizer_config.json` (as written
        by `save_to_preset()`, or by Hugging Face `save_pretrained()`), or,
        without `vocab.txt`, a Hugging Face `tokenizer.json`. A name or
        handle is resolved with `kbert.presets.resolve_preset` first.

        Args:
            preset: a folder path, or a preset or checkpoint name or handle.

        Returns:
            A `BertTokenizer`.

        Examples:

        >>> tokenizer = BertTokenizer.from_preset("path/to/preset")
        >>> tokenizer = BertTokenizer.from_preset("demo")
        """
        folder = pathlib.Path(preset).expanduser()
        if not folder.is_dir():
            # A name or handle: the tokenizer of the preset it resolves to. A folder is
            # read as it is (a Hugging Face folder's files are this class's own format).
            from kbert.presets import resolve_preset

            folder = pathlib.Path(resolve_preset(preset))
        return cls.from_tokenizer_data(read_tokenizer_folder(folder))

    @classmethod
    def from_tokenizer_data(cls, data):
        """Creates a tokenizer from a `kbert.checkpoints.TokenizerData`."""
        return cls(list(data.vocabulary), **data.settings)

    def tokenizer_data(self):
        """This tokenizer as plain data: its vocabulary and `get_config()`."""
        return TokenizerData(self._vocabulary.tokens, self.get_config())

    def save_to_preset(self, folder):
        """Writes `vocab.txt` and `tokenizer_config.json` into `folder`.

        Each file is written under a temporary name in the same folder and
        then renamed, so an interrupted save never leaves a half-written file.

        Args:
            folder: the preset folder; created if missing.

        Examples:

        >>> tokenizer.save_to_preset("presets/my_tokenizer")
        >>> BertTokenizer.from_preset("presets/my_tokenizer")
        """
        write_tokenizer_folder(self.tokenizer_data(), folder)
