"""Tokenizer files as plain data: `vocab.txt`, `tokenizer_config.json`, `tokenizer.json`.

- `vocab.txt`: one token per line, id = line number (kbert presets, Hugging Face and
  Google folders).
- `tokenizer_config.json`: kbert's settings (`lowercase`, `max_length`, the special
  tokens, ...) or transformers' (`do_lower_case`, `model_max_length`, special tokens as
  strings or AddedToken objects); one reader understands both.
- `tokenizer.json`: a Hugging Face fast tokenizer with a WordPiece model; its
  `BertNormalizer` gives the casing, its post-processor `[CLS]`/`[SEP]`.

Everything returns `TokenizerData` (a vocabulary and a settings dict); the tokenizer
(`kbert.tokenizer.BertTokenizer`) is built from it above. Every file is read through
`kbert.files.bounded_reader` (regular files inside the folder, sizes and JSON depth
bounded).
"""

import io
import json
import logging
import os
import pathlib

from kbert.checkpoints.tokenizer_data import CONTINUING_SUBWORD_PREFIX
from kbert.checkpoints.tokenizer_data import MAX_INPUT_CHARS_PER_WORD
from kbert.checkpoints.tokenizer_data import SPECIAL_TOKENS
from kbert.checkpoints.tokenizer_data import TokenizerData
from kbert.files.atomic_write import write_text_atomically
from kbert.files.bounded_reader import read_bytes
from kbert.files.bounded_reader import read_json

logger = logging.getLogger("kbert.tokenizer")

VOCABULARY_FILE = "vocab.txt"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
HUGGINGFACE_TOKENIZER_FILE = "tokenizer.json"

# Hugging Face writes model_max_length=int(1e30) for "no limit"; anything
# this large is that sentinel, not a real position-embedding size.
_HUGGINGFACE_NO_LIMIT = 10**12


def read_vocabulary(path, folder=None):
    """The tokens of a `vocab.txt`, one per line (universal newlines, as transformers).

    Args:
        path: the file.
        folder: the model folder it must stay inside, every folder on the way included;
            by default the folder holding it.
    """
    path = pathlib.Path(path)
    if not os.path.lexists(path):
        raise ValueError(f"Vocabulary file not found: {path}. Received: vocabulary={str(path)!r}")
    data = read_bytes(path, "vocabulary", folder)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ValueError(
            f"Vocabulary file {path} is not valid UTF-8 (line {line}: {error.reason})."
        ) from None
    # Universal newlines and rstrip("\n"), as transformers' load_vocab,
    # so a vocab.txt saved with Windows line ends reads the same.
    return [line.rstrip("\n") for line in io.StringIO(text, newline=None)]


def vocabulary_text(vocabulary, file_name=VOCABULARY_FILE):
    """The contents of a `vocab.txt` for `vocabulary`; refuses tokens with line breaks."""
    for index, token in enumerate(vocabulary):
        if "\n" in token or "\r" in token:
            raise ValueError(
                f"Token {index} ({token!r}) contains a line break and cannot be written "
                f"to {file_name}."
            )
    return "".join(token + "\n" for token in vocabulary)


def read_tokenizer_folder(folder):
    """The tokenizer of a kbert preset or Hugging Face folder.

    `vocab.txt` with the `tokenizer_config.json` beside it (kbert's or transformers'),
    or, without `vocab.txt`, a Hugging Face `tokenizer.json`.

    Raises:
        ValueError: when the folder has neither, or a file is unusable.
    """
    folder = pathlib.Path(folder)
    vocabulary_path = folder / VOCABULARY_FILE
    # lexists, not is_file: a vocab.txt that is a FIFO or a link out of the folder is
    # refused by the bounded reader rather than passed over.
    if os.path.lexists(vocabulary_path):
        config_path = folder / TOKENIZER_CONFIG_FILE
        settings = {}
        if os.path.lexists(config_path):
            settings = read_tokenizer_config(config_path)
        else:
            logger.warning(
                "%s has no %s; using default tokenizer settings.", folder, TOKENIZER_CONFIG_FILE
            )
        return TokenizerData(read_vocabulary(vocabulary_path), settings)
    if os.path.lexists(folder / HUGGINGFACE_TOKENIZER_FILE):
        return read_tokenizer_json(folder / HUGGINGFACE_TOKENIZER_FILE)
    raise ValueError(
        f"The preset folder {folder} has neither {VOCABULARY_FILE} nor "
        f"{HUGGINGFACE_TOKENIZER_FILE}. Received: preset={str(folder)!r}"
    )


def has_tokenizer_files(folder):
    """Whether `folder` has a `vocab.txt` or a `tokenizer.json` (links count)."""
    folder = pathlib.Path(folder)
    return any(
        os.path.lexists(folder / name) for name in (VOCABULARY_FILE, HUGGINGFACE_TOKENIZER_FILE)
    )


def write_tokenizer_folder(tokenizer, folder):
    """Writes `vocab.txt` and kbert's `tokenizer_config.json` for `tokenizer` into `folder`.

    Each file is written under a temporary name in the same folder and then renamed, so
    an interrupted save never leaves a half-written file.
    """
    folder = pathlib.Path(folder)
    text = vocabulary_text(tokenizer.vocabulary)
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomically(folder / VOCABULARY_FILE, text)
    write_text_atomically(
        folder / TOKENIZER_CONFIG_FILE,
        json.dumps(tokenizer.all_settings(), indent=2, ensure_ascii=False) + "\n",
    )


def _token_content(value):
    # transformers writes special tokens as strings or as AddedToken dicts.
    if isinstance(value, dict):
        return value.get("content")
    return value


def read_tokenizer_config(path):
    """The settings of kbert's `tokenizer_config.json`, or of transformers' one."""
    config = read_json(path, "config")
    if not isinstance(config, dict):
        raise ValueError(f"{path} must hold a JSON object.")
    settings = {}
    for key in ("lowercase", "strip_accents", "tokenize_chinese_chars"):
        if key in config:
            settings[key] = config[key]
    if "lowercase" not in config and "do_lower_case" in config:
        settings["lowercase"] = config["do_lower_case"]
    for key in SPECIAL_TOKENS:
        if key in config:
            settings[key] = _token_content(config[key])
    if "max_length" in config:
        settings["max_length"] = config["max_length"]
    elif isinstance(config.get("model_max_length"), (int, float)):
        if config["model_max_length"] < _HUGGINGFACE_NO_LIMIT:
            settings["max_length"] = int(config["model_max_length"])
    for key, value in settings.items():
        if key in SPECIAL_TOKENS and not isinstance(value, str):
            raise ValueError(f"{path}: '{key}' must be a string. Received: {value!r}")
        if key in ("lowercase", "tokenize_chinese_chars") and not isinstance(value, bool):
            raise ValueError(f"{path}: '{key}' must be true or false. Received: {value!r}")
    return settings


# --- Hugging Face tokenizer.json -------------------------------------------------------


def read_tokenizer_json(path):
    """The tokenizer of a Hugging Face `tokenizer.json` (a file, or a folder holding one).

    The file must hold a WordPiece model. Lower-casing, accent stripping and CJK
    splitting are read from its `BertNormalizer`; `[CLS]`/`[SEP]` from its
    post-processor; `max_length` and the remaining special tokens from a
    `tokenizer_config.json` beside it, when there is one.
    """
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / HUGGINGFACE_TOKENIZER_FILE
    document = read_json(path, "tokenizer")
    model = document.get("model") if isinstance(document, dict) else None
    if not isinstance(model, dict):
        raise ValueError(f"{path} is not a Hugging Face tokenizer.json: it has no 'model' object.")
    if model.get("type") != "WordPiece":
        raise ValueError(
            f"{path} holds a {model.get('type')!r} model; BertTokenizer needs a 'WordPiece' model."
        )
    for key, expected in (
        ("continuing_subword_prefix", CONTINUING_SUBWORD_PREFIX),
        ("max_input_chars_per_word", MAX_INPUT_CHARS_PER_WORD),
    ):
        if model.get(key, expected) != expected:
            raise ValueError(
                f"{path}: BertTokenizer supports only model.{key}={expected!r}. "
                f"Received: {key}={model[key]!r}"
            )
    vocabulary = _vocabulary_from_mapping(model.get("vocab"), path)

    settings = {}
    sibling_config = path.parent / TOKENIZER_CONFIG_FILE
    if os.path.lexists(sibling_config):
        settings.update(read_tokenizer_config(sibling_config))
    settings.update(_settings_from_normalizer(document.get("normalizer"), path))
    settings.update(_special_tokens_from_post_processor(document, path))
    if isinstance(model.get("unk_token"), str):
        settings["unk_token"] = model["unk_token"]
    tokenizer = TokenizerData(vocabulary, settings)
    special_tokens = {tokenizer.setting(argument) for argument in SPECIAL_TOKENS}
    added_tokens = document.get("added_tokens")
    extra_tokens = [
        entry["content"]
        for entry in (added_tokens if isinstance(added_tokens, list) else [])
        if isinstance(entry, dict)
        and isinstance(entry.get("content"), str)
        and entry["content"] not in special_tokens
    ]
    if extra_tokens:
        logger.warning(
            "%s adds %d token(s) beyond the five special tokens (e.g. %r); BertTokenizer "
            "treats them as ordinary vocabulary entries, or drops them if they are not in "
            "the WordPiece vocabulary.",
            path,
            len(extra_tokens),
            extra_tokens[:5],
        )
    return tokenizer


def _vocabulary_from_mapping(mapping, path):
    if not isinstance(mapping, dict) or not mapping:
        raise ValueError(f"{path}: 'model.vocab' must be a non-empty object.")
    vocabulary = [None] * len(mapping)
    for token, index in mapping.items():
        if (
            isinstance(index, bool)
            or not isinstance(index, int)
            or not 0 <= index < len(mapping)
            or vocabulary[index] is not None
        ):
            raise ValueError(
                f"{path}: 'model.vocab' ids must be 0..{len(mapping) - 1}, each "
                f"once. Received: {token!r}: {index!r}"
            )
        vocabulary[index] = token
    return vocabulary


def _settings_from_normalizer(normalizer, path):
    candidates = [normalizer]
    if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence":
        candidates = normalizer.get("normalizers") or []
    for candidate in candidates:
        if isinstance(candidate, dict) and candidate.get("type") == "BertNormalizer":
            if not candidate.get("clean_text", True):
                logger.warning("%s turns clean_text off; BertTokenizer always cleans text.", path)
            return {
                "lowercase": bool(candidate.get("lowercase", True)),
                "strip_accents": candidate.get("strip_accents"),
                "tokenize_chinese_chars": bool(candidate.get("handle_chinese_chars", True)),
            }
    found = normalizer.get("type") if isinstance(normalizer, dict) else normalizer
    raise ValueError(
        f"{path} has no BertNormalizer, so its settings cannot be read. "
        f"Received: normalizer type {found!r}"
    )


def _special_tokens_from_post_processor(document, path):
    processor = document.get("post_processor")
    if not isinstance(processor, dict):
        return {}
    if processor.get("type") == "BertProcessing":
        tokens = {}
        for key, argument in (("sep", "sep_token"), ("cls", "cls_token")):
            entry = processor.get(key)
            if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str):
                raise ValueError(
                    f"{path}: post_processor (BertProcessing) `{key}` must be "
                    f"[token, id]. Received: {key}={entry!r:.80}"
                )
            tokens[argument] = entry[0]
        return tokens
    if processor.get("type") == "TemplateProcessing":
        # The single template reads [CLS] $A [SEP]: first and last special.
        single = processor.get("single")
        specials = [
            piece["SpecialToken"].get("id")
            for piece in (single if isinstance(single, list) else [])
            if isinstance(piece, dict) and isinstance(piece.get("SpecialToken"), dict)
        ]
        if len(specials) == 2 and all(isinstance(token, str) for token in specials):
            return {"cls_token": specials[0], "sep_token": specials[1]}
    return {}
