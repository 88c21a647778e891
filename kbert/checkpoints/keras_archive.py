"""A `.keras` archive (what `model.save("x.keras")` writes) read as plain data, bounded.

A `.keras` file is a zip archive: `config.json` (the model's Keras config),
`model.weights.h5` (its variables, Keras' layout) and `assets/` (a kbert task's
tokenizer files). Nothing in it is trusted before it is checked:

- the archive is opened once by the bounded reader (a regular file, no link) and every
  later read uses that open file;
- before a byte is extracted, its members are listed and refused when there are too
  many, when a name could leave the archive (absolute, `..`, a drive, a backslash), when
  a member is a link or another non-regular file, is encrypted or compressed by a method
  other than store or deflate, when a member inflates more than `MAX_MEMBER_RATIO`
  times, when all of them together declare more than the archive stores
  (`kbert.files.load_budget.check_stored_bytes`: a deflate bomb, a sparse archive) or
  more than the load budget;
- only `config.json`, `model.weights.h5` and `assets/` are extracted, into a private
  temporary folder, each no larger than it declared;
- `config.json` is read as a preset's is (size cap, depth-limited JSON), must name a
  kbert model class and no lambda anywhere, and its backbone config passes `BertConfig`'s checks and the load
  budget before anything is built; the weights file passes
  `kbert.checkpoints.weights_file.check_weights_file` (no links, no external storage);
- the model is built by Keras in safe mode (a config naming a lambda or other code is
  refused), its weights and tokenizer loaded from the checked files, and returned as
  `CheckpointData`, label names and tokenizer included. The optimizer state is not read.

Keras finds kbert's classes by their registered names (`kbert.keras_registry`); this
module imports no model class.
"""

import hashlib
import os
import pathlib
import posixpath
import stat
import tempfile
import zipfile

from kbert.architecture.bert_config import BertConfig
from kbert.checkpoints.weights_file import check_weights_file
from kbert.files.atomic_write import check_free_space
from kbert.files.atomic_write import raise_if_disk_full
from kbert.files.bounded_reader import open_checked
from kbert.files.bounded_reader import read_json
from kbert.files.load_budget import check_load_budget
from kbert.files.load_budget import check_stored_bytes
from kbert.files.load_budget import stored_bytes
from kbert.keras_registry import registered_object

ARCHIVE_SUFFIX = ".keras"
CONFIG_MEMBER = "config.json"
WEIGHTS_MEMBER = "model.weights.h5"
ASSETS_FOLDER = "assets/"
# Keras writes a handful of members; a kbert task's tokenizer adds two.
MAX_MEMBERS = 1000
# Deflate shrinks float weights and vocabularies a few times at most; a bomb of zeros
# inflates about a thousand times.
MAX_MEMBER_RATIO = 20
MEMBER_RATIO_MARGIN_BYTES = 1 << 20
_COMPRESSIONS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
_CHUNK_BYTES = 1 << 20
# A member's local header and central directory entry (about 100 bytes besides its name
# and extra fields), and what an archive may hold besides its members (its comment, a
# few alignment bytes).
_HEADER_BYTES = 128
PADDING_ALLOWANCE_BYTES = 1 << 20
# How Keras serializes a lambda: its bytecode, which safe mode refuses and so does kbert.
_LAMBDA_CLASS = "__lambda__"
# Keys of a backbone's Keras config that are not `BertConfig` fields.
_LAYER_KEYS = ("name", "trainable", "dtype")


def is_keras_archive(path):
    """Whether `path` names an existing file ending in `.keras` (its contents unchecked)."""
    path = pathlib.Path(path)
    return path.suffix.lower() == ARCHIVE_SUFFIX and path.is_file()


def archive_key(path):
    """The first 16 hex digits of the sha256 of the archive's bytes (its cache key)."""
    return archive_digest(path)[:16]


def archive_digest(path):
    """The sha256 of the archive's bytes, in hex.

    The members are listed and checked first (`check_members`), and the archive may hold
    little besides them: a bomb, a sparse archive or one padded with gigabytes that
    belong to no member is refused before its bytes are hashed.
    """
    digest = hashlib.sha256()
    with open_checked(path) as handle:
        with _open_archive(path, handle) as archive:
            check_members(path, archive, handle)
            _check_padding(path, archive, handle)
        handle.seek(0)
        for chunk in iter(lambda: handle.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check_padding(path, archive, handle):
    """Refuses an archive much larger than its members (padding a hash would read)."""
    size = os.fstat(handle.fileno()).st_size
    members = archive.infolist()
    expected = sum(
        member.compress_size + _HEADER_BYTES + 2 * len(member.filename.encode("utf-8"))
        + len(member.extra) + len(member.comment)
        for member in members
    )
    if size > expected + PADDING_ALLOWANCE_BYTES:
        _refuse(
            path,
            f"it is {size} bytes long but its members take about {expected}: the rest "
            "belongs to no member",
        )


def _open_archive(path, handle):
    try:
        return zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, OSError) as error:
        _refuse(path, f"it is not a zip archive ({error})")


def _refuse(path, reason):
    raise ValueError(f"Refusing to read {str(path)!r} as a .keras model: {reason}.")


def _check_name(path, name):
    parts = name.split("/")
    if (
        not name
        or "\\" in name
        or "\0" in name
        or name.startswith("/")
        or (len(name) > 1 and name[1] == ":")
        or ".." in parts
        or posixpath.normpath(name).startswith("..")
    ):
        _refuse(path, f"member {name!r} has a path that leaves the archive")


def _check_member(path, member):
    _check_name(path, member.filename)
    mode = member.external_attr >> 16
    if stat.S_ISLNK(mode) or (stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR)):
        _refuse(path, f"member {member.filename!r} is a link or another non-regular file")
    if member.flag_bits & 0x1:
        _refuse(path, f"member {member.filename!r} is encrypted")
    if member.compress_type not in _COMPRESSIONS:
        _refuse(path, f"member {member.filename!r} uses compression method {member.compress_type}")
    if member.file_size > MAX_MEMBER_RATIO * member.compress_size + MEMBER_RATIO_MARGIN_BYTES:
        _refuse(
            path,
            f"member {member.filename!r} declares {member.file_size} bytes from "
            f"{member.compress_size} compressed (more than {MAX_MEMBER_RATIO} times: a "
            "compression bomb)",
        )


def check_members(path, archive, handle):
    """The members of the open `archive` to extract, after checking every member listed.

    Raises:
        ValueError: naming the archive and the member at fault.
    """
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        _refuse(path, f"it lists {len(members)} members, more than {MAX_MEMBERS}")
    names = set()
    for member in members:
        _check_member(path, member)
        if member.filename in names:
            _refuse(path, f"member {member.filename!r} is listed twice")
        names.add(member.filename)
    for required in (CONFIG_MEMBER, WEIGHTS_MEMBER):
        if required not in names:
            _refuse(path, f"it has no {required} (members: {', '.join(sorted(names)[:10])})")
    declared = sum(member.file_size for member in members)
    check_stored_bytes(path, declared, stored=stored_bytes(handle.fileno()), what="its members")
    check_load_budget(path, declared, "its members")
    return [
        member
        for member in members
        if not member.is_dir()
        and (member.filename in (CONFIG_MEMBER, WEIGHTS_MEMBER)
             or member.filename.startswith(ASSETS_FOLDER))
    ]


def _extract(path, archive, members, folder):
    """Writes `members` under `folder`, each at most the size it declared."""
    needed = sum(member.file_size for member in members)
    check_free_space(folder, needed, f"{folder} (the members of {path})")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for member in members:
        target = pathlib.Path(folder, *member.filename.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        try:
            descriptor = os.open(target, flags, 0o600)
            with archive.open(member) as source, os.fdopen(descriptor, "wb") as out:
                for chunk in iter(lambda: source.read(_CHUNK_BYTES), b""):
                    written += len(chunk)
                    if written > member.file_size:
                        _refuse(path, f"member {member.filename!r} inflates past its size")
                    out.write(chunk)
        except (zipfile.BadZipFile, EOFError, OSError) as error:
            if isinstance(error, FileExistsError):
                _refuse(path, f"member {member.filename!r} is listed twice")
            # A full disk is the scratch folder's, not a fault of the archive.
            raise_if_disk_full(error, target)
            _refuse(path, f"member {member.filename!r} cannot be read ({error})")


def _backbone_fields(path, config):
    """The `BertConfig` fields of the archive's backbone, from its Keras `config`."""
    inner = config.get("config")
    if isinstance(inner, dict) and isinstance(inner.get("backbone"), dict):
        inner = inner["backbone"].get("config")
    if not isinstance(inner, dict):
        _refuse(path, f"{CONFIG_MEMBER} holds no backbone config")
    return {key: value for key, value in inner.items() if key not in _LAYER_KEYS}


def _checked_config(path, folder):
    """The archive's parsed config.json, checked: no lambda, a kbert class, a backbone
    within `BertConfig`'s bounds that the (checked) weights file can fill."""
    config = read_json(folder / CONFIG_MEMBER, "config", folder)
    if not isinstance(config, dict) or not isinstance(config.get("registered_name"), str):
        _refuse(path, f"{CONFIG_MEMBER} does not describe a registered Keras model")
    if _names_code(config):
        _refuse(path, f"{CONFIG_MEMBER} holds a Python lambda (code), which kbert never runs")

    model_class = registered_object(config["registered_name"])
    if model_class is None or not hasattr(model_class, "to_checkpoint_data"):
        _refuse(
            path,
            f"it holds a `{config['registered_name']}`, which is not a kbert model class "
            "known in this process (import the module that defines a registered subclass)",
        )
    try:
        backbone_config = BertConfig.from_dict(_backbone_fields(path, config))
    except (TypeError, ValueError) as error:
        _refuse(path, f"{CONFIG_MEMBER}, field `backbone`: {error}")
    declared = check_weights_file(folder / WEIGHTS_MEMBER, folder)
    values = sum(_element_count(shape) for shape, _ in declared.values())
    backbone_config.check_weights_hold(values, f"{path} ({CONFIG_MEMBER})")
    return config


def _names_code(value):
    """Whether the parsed JSON `value` holds a serialized lambda anywhere (depth-limited
    when it was parsed)."""
    if isinstance(value, dict):
        if value.get("class_name") == _LAMBDA_CLASS:
            return True
        return any(_names_code(item) for item in value.values())
    if isinstance(value, list):
        return any(_names_code(item) for item in value)
    return False


def _element_count(shape):
    count = 1
    for size in shape:
        count *= int(size)
    return count


def _build(path, config, folder):
    """The model the checked `config` describes, with the archive's weights and assets."""
    import keras

    config = {key: value for key, value in config.items() if key != "compile_config"}
    try:
        model = keras.saving.deserialize_keras_object(config, safe_mode=True)
        model.load_weights(str(folder / WEIGHTS_MEMBER))
    except (TypeError, ValueError, KeyError) as error:
        _refuse(path, f"Keras cannot build it in safe mode ({str(error).splitlines()[0][:300]})")
    assets = folder / ASSETS_FOLDER
    if assets.is_dir() and hasattr(model, "load_assets"):
        model.load_assets(str(assets))
    return model


def read_keras_archive(path):
    """The `CheckpointData` of the `.keras` file `path`, every bound checked first.

    Raises:
        ValueError: naming the file and what is wrong (a member listed as above, a
            config that is no kbert model or breaks `BertConfig`'s bounds, a weights
            file with links, a config naming code).
    """
    path = pathlib.Path(path).expanduser()
    with open_checked(path) as handle:
        with _open_archive(path, handle) as archive:
            members = check_members(path, archive, handle)
            with tempfile.TemporaryDirectory(prefix="kbert-keras-") as scratch:
                folder = pathlib.Path(scratch)
                try:
                    _extract(path, archive, members, folder)
                    model = _build(path, _checked_config(path, folder), folder)
                except ValueError as error:
                    # Name the member inside the archive, not the scratch copy.
                    raise ValueError(str(error).replace(str(folder), str(path))) from None
                return model.to_checkpoint_data()
