"""Downloads from the model hubs, with the ecosystem's own clients.

`huggingface_hub` fetches Hugging Face repositories (`snapshot_download`), `kagglehub`
fetches Kaggle models, where keras-hub publishes its presets (`model_download`). Both
are imported only when a download is needed, so kbert works without them offline.
Every failure to reach a hub becomes `DownloadFailed`, a ValueError whose message the
caller completes with what to do offline.
"""

import logging
import os
import pathlib

logger = logging.getLogger("kbert.checkpoints")

_TRUE_VALUES = ("1", "true", "yes", "on")

# What a model repository may hold, in every format kbert reads: configs, vocabularies and
# tokenizer files of any kind, keras-hub's assets, and one set of weights. The weight files
# are tried in this order; the first that the repository has is the one downloaded, so a
# repository with safetensors never costs the PyTorch pickle too.
METADATA_PATTERNS = ("*.json", "*.txt", "assets/*", "assets/**/*")
WEIGHT_PATTERNS = (
    ("model.safetensors",),
    ("model.weights.h5", "task.weights.h5"),
    ("bert_model.ckpt.index", "bert_model.ckpt.data-*"),
    ("pytorch_model.bin",),
)


class DownloadFailed(ValueError):
    """A hub could not be reached, or does not have what was asked for."""


def offline_by_environment():
    """Whether `HF_HUB_OFFLINE` asks every client to stay offline."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE_VALUES


def download_huggingface(
    repo_id, folder, metadata_patterns=METADATA_PATTERNS, weight_patterns=WEIGHT_PATTERNS
):
    """Fetches a Hugging Face repository's model files into `folder`.

    Args:
        repo_id: "owner/name".
        folder: where the files go (created).
        metadata_patterns: the small files to fetch (file names or glob patterns).
        weight_patterns: alternatives, tried in order until one brings a file.

    Returns:
        `folder`, as a `pathlib.Path`.

    Raises:
        DownloadFailed: when the hub cannot be reached or has none of the weights.
    """
    folder = pathlib.Path(folder)
    try:
        from huggingface_hub import snapshot_download
    except ImportError as error:
        raise DownloadFailed(
            f"Downloading {repo_id!r} needs the package huggingface_hub ({error})."
        ) from None
    logger.info("Downloading %s from Hugging Face into %s.", repo_id, folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for patterns in weight_patterns:
            snapshot_download(
                repo_id, allow_patterns=[*metadata_patterns, *patterns], local_dir=folder
            )
            if any(any(folder.glob(pattern)) for pattern in patterns):
                return folder
    except connection_errors() as error:
        raise DownloadFailed(f"the download failed: {short_reason(error)}") from None
    wanted = [name for patterns in weight_patterns for name in patterns]
    raise DownloadFailed(f"the Hugging Face repository {repo_id} has none of {wanted}")


def download_kaggle(handle):
    """Fetches a Kaggle model (a keras-hub preset) into kagglehub's own cache.

    Args:
        handle: "owner/model/framework/variation[/version]".

    Returns:
        The folder kagglehub put it in.

    Raises:
        DownloadFailed: when Kaggle cannot be reached or has no such model.
    """
    try:
        import kagglehub
    except ImportError as error:
        raise DownloadFailed(
            f"Downloading {handle!r} needs the package kagglehub ({error})."
        ) from None
    logger.info("Downloading %s from Kaggle.", handle)
    try:
        return pathlib.Path(kagglehub.model_download(handle))
    except ValueError as error:  # a handle kagglehub refuses, e.g. an unknown framework
        raise DownloadFailed(f"kagglehub refused the handle: {short_reason(error)}") from None
    except connection_errors() as error:
        raise DownloadFailed(f"the download failed: {short_reason(error)}") from None


def short_reason(error, limit=200):
    """The first line of a client's error, without its "Got: " prefix, at most `limit` characters.

    huggingface_hub's connection errors run to several lines of advice ("check your
    internet connection ..."); kbert's message says what to do offline instead.
    """
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    reason = lines[0] if lines else type(error).__name__
    reason = reason.removeprefix("Got: ").rstrip(".")
    return reason if len(reason) <= limit else reason[: limit - 3] + "..."


def connection_errors():
    """Exceptions that mean "could not download", from the clients that are installed."""
    errors = [OSError, ConnectionError, TimeoutError]
    try:
        from huggingface_hub.errors import EntryNotFoundError

        errors.append(EntryNotFoundError)
    except ImportError:
        pass
    try:
        import httpx

        errors.append(httpx.HTTPError)
    except ImportError:
        pass
    try:
        from kagglehub import exceptions

        errors += [exceptions.BackendError, exceptions.NotFoundError, exceptions.KaggleApiHTTPError]
    except (ImportError, AttributeError):
        pass
    return tuple(errors)
