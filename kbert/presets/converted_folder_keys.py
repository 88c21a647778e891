"""Content keys of checkpoint folders converted into the cache, remembered in an index.

A checkpoint folder given as a model source (a Hugging Face, Google or keras-hub folder)
is converted once into `<cache>/converted/<format>-<key>`, where the key is a digest of
its files' names and contents. Hashing a BERT-large folder takes seconds, so
`<cache>/converted/index.json` remembers each folder's key by its files' sizes and
modification times. The index is only a cache: a missing, damaged or hostile one (too
large, too deep, a link) is ignored with a warning and rebuilt.
"""

import hashlib
import logging
import os
import pathlib

logger = logging.getLogger("kbert.presets")

INDEX_FILE = "index.json"
# The folders it remembers (the most recently hashed are kept).
MAX_INDEX_ENTRIES = 2000
_HASH_CHUNK_BYTES = 1 << 20
# More files than this is not a checkpoint folder (a home folder dropped by mistake).
MAX_CHECKPOINT_FILES = 1000


def _checkpoint_files(folder):
    files = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts):
            continue  # hidden files (.git, editor swap files) are not the checkpoint
        if path.is_file() or path.is_symlink():
            files.append(path)
            if len(files) > MAX_CHECKPOINT_FILES:
                raise ValueError(
                    f"{str(folder)!r} holds more than {MAX_CHECKPOINT_FILES} files; a "
                    "checkpoint folder holds a few. Point at the checkpoint's own folder."
                )
    return files


def content_key(folder, converted_folder):
    """The first 16 hex digits of a sha256 over `folder`'s file names and contents.

    Remembered in `converted_folder/index.json` by the files' sizes and modification
    times, so an unchanged folder is not hashed again.
    """
    files = _checkpoint_files(folder)
    signature = [
        [str(path.relative_to(folder)), path.lstat().st_size, path.lstat().st_mtime_ns]
        for path in files
    ]
    index_path = pathlib.Path(converted_folder) / INDEX_FILE
    index = _read_index(index_path)
    remembered = index.get(str(folder.resolve()))
    if isinstance(remembered, dict) and remembered.get("signature") == signature:
        return str(remembered["key"])
    from kbert.files import check_load_budget
    from kbert.files import check_stored_bytes
    from kbert.files import open_checked

    # Read as every file of a model folder is: regular files inside it, no sparse or
    # over-budget files (refused here before a byte is hashed).
    check_load_budget(folder, sum(size for _, size, _ in signature), "its files")
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(folder)).encode("utf-8") + b"\0")
        file_digest = hashlib.sha256()
        with open_checked(path, folder=folder) as handle:
            check_stored_bytes(path, path.stat().st_size, what="its size")
            for chunk in iter(lambda: handle.read(_HASH_CHUNK_BYTES), b""):
                file_digest.update(chunk)
        digest.update(file_digest.digest())
    key = digest.hexdigest()[:16]
    index.pop(str(folder.resolve()), None)  # re-inserted last: the most recent is kept
    index[str(folder.resolve())] = {"signature": signature, "key": key}
    _write_index(index_path, index)
    return key


def _read_index(path):
    """The index of converted folders; empty when it is missing, damaged or hostile
    (too large, too deep, a link): it is only a cache of hashes, rebuilt as loads go."""
    from kbert.files import read_json

    if not os.path.lexists(path):
        return {}
    try:
        index = read_json(path, "config")
    except (OSError, ValueError) as error:
        logger.warning("Ignoring %s (%s); it is rebuilt as models are loaded.", path, error)
        return {}
    return index if isinstance(index, dict) else {}


def _write_index(path, index):
    # Best effort: without the index, the next load hashes the folder again.
    from kbert.files import write_json_atomically

    if len(index) > MAX_INDEX_ENTRIES:
        index = dict(list(index.items())[-MAX_INDEX_ENTRIES:])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomically(path, index, sort_keys=False)
    except (OSError, ValueError) as error:
        logger.debug("Could not update %s: %s", path, error)
