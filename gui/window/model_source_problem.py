"""Whether what the user typed in "Open model" (or dropped) can name a model.

A quick check on the UI thread (names, prefixes and whether a path exists; nothing is
read, downloaded or converted): what passes goes to the app's `ModelOpener`, which
resolves it in a worker and says there why a folder or a download is no model.
"""

import difflib
import os
import pathlib
import re

from kbert.checkpoints.named_checkpoints import CHECKPOINT_ALIASES
from kbert.checkpoints.named_checkpoints import NAMED_CHECKPOINTS
from kbert.presets.model_source import HUGGINGFACE_SCHEME
from kbert.presets.model_source import KAGGLE_SCHEME
from kbert.presets.preset_registry import BUILTIN_PRESETS

NO_NAME = "Type a model's name or path, or choose a folder or a .keras file."
_HUGGINGFACE_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_KAGGLE_HANDLE = re.compile(r"^[\w.-]+/[\w.-]+/[\w.-]+/[\w.-]+(?:/\d+)?$")


def model_names():
    """Every name the resolver knows without a path: built-in, then published ones."""
    return sorted(BUILTIN_PRESETS) + sorted(set(NAMED_CHECKPOINTS) | set(CHECKPOINT_ALIASES))


def model_source_problem(text):
    """Why `text` names no model, in one sentence, or "" where it may name one.

    Args:
        text: what the user typed (a name, `hf://owner/name`, `kaggle://...`, a path).
    """
    text = text.strip()
    if not text:
        return NO_NAME
    if text.startswith(HUGGINGFACE_SCHEME):
        if _HUGGINGFACE_ID.match(text[len(HUGGINGFACE_SCHEME) :]):
            return ""
        return f"{text} is no Hugging Face repository: write hf://owner/name."
    if text.startswith(KAGGLE_SCHEME):
        if _KAGGLE_HANDLE.match(text[len(KAGGLE_SCHEME) :]):
            return ""
        return f"{text} is no Kaggle model: write kaggle://owner/model/framework/variation."
    if text in BUILTIN_PRESETS or text in NAMED_CHECKPOINTS or text in CHECKPOINT_ALIASES:
        return ""
    path = pathlib.Path(text).expanduser()
    if path.is_dir() or (path.is_file() and path.suffix.lower() == ".keras"):
        return ""
    if path.is_file():
        return f"{path.name} is a file, not a model: choose its folder, or a .keras file."
    if text.startswith((".", "~", os.sep)) or (os.altsep and os.altsep in text):
        return f"There is no folder or file {text}."
    return _unknown_name(text)


def _unknown_name(text):
    hint = ""
    if _HUGGINGFACE_ID.match(text):
        hint = f" For the Hugging Face repository, write hf://{text}."
    close = difflib.get_close_matches(text, model_names(), n=2, cutoff=0.6)
    if close and not hint:
        hint = f" Did you mean {' or '.join(close)}?"
    return (
        f"No model is called {text}: it is no built-in or published name, nor a folder "
        f"here.{hint}"
    )


def dropped_model(mime_data):
    """The first dropped folder or `.keras` file, or None."""
    if not mime_data.hasUrls():
        return None
    for url in mime_data.urls():
        path = pathlib.Path(url.toLocalFile())
        if url.isLocalFile() and (path.is_dir() or path.suffix.lower() == ".keras"):
            return path
    return None
