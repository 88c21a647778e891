"""Hostile model and data folders, each built small on disk, and what kbert must say to each.

Run as a script (by tests/test_hostile_files.py) it builds every case in a work folder,
runs the kbert call a user would make on it under a 10-second alarm, and prints one JSON
report: per case the exception raised (or none) and its message; the process's peak
memory; and every attempt to open a sentinel file kept outside the folders. The huge
files are faked: sparse files (apparent gigabytes, kilobytes on disk) and compressed zip
entries. The file checks do not depend on the backend, so the worker runs on Keras'
NumPy backend, which keeps its baseline memory low.

Cases cover five kinds of hostile file: (1) files that are not regular or too large before
format detection, (2) config sizes beyond the weights, (3) declared sizes beyond storage,
(4) links out of the folder, (5) malformed content that used to raise tracebacks.
"""

import builtins
import io
import json
import os
import pathlib
import resource
import shutil
import signal
import struct
import sys
import time
import traceback
import zipfile

CASE_SECONDS = 10
VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(35)]
TINY = dict(
    vocabulary_size=len(VOCABULARY),
    hidden_size=16,
    num_layers=1,
    num_heads=2,
    intermediate_size=20,
    max_positions=16,
)
SECRET = "SECRET-TOKEN-7f3a"
GIB = 2**30

# name -> regular expression the error message must match. A case whose pattern is None
# must load without error (positive controls: over-refusal fails too).
EXPECTED = {
    # 1. Not a regular file, or too large, before anything is read.
    "config.json links to /dev/zero": r"link to '/dev/zero', outside the folder",
    "config.json is a FIFO": r"config\.json'.*a FIFO \(named pipe\), not a regular file",
    "vocab.txt is a FIFO": r"vocab\.txt'.*a FIFO",
    "config.json of 2 GB (sparse)": r"config\.json'.*more than the 10485760 a config file",
    # 2. Sizes in config.json beyond what the weights hold, refused before building.
    "preset: vocabulary 10^6 x hidden 4096": r"config\.json.*(load budget|weights file declares only)",
    "preset: 10^6 layers": r"config\.json', field `backbone`: `num_layers` must be at most 256",
    "preset: hidden_size 10^9": r"`hidden_size` must be at most 16384",
    "preset: num_classes 10^9": r"config\.json', field `task`: `num_classes` must be at most 100000",
    "huggingface: vocabulary 10^6 over small weights": r"config\.json: the config describes .* weights file declares only",
    "huggingface: num_labels 10^9": r"`num_labels` must be an integer from 1 to 100000",
    "keras-hub: hidden_dim 10^9": r"config\.json: `hidden_size` must be at most 16384",
    # 3. Declared sizes beyond actual storage.
    "pytorch zip entry inflating to 512 MB": r"zip entries declare 5\d{8} bytes but only \d+ are stored",
    "safetensors of 6 GB (sparse)": r"model\.safetensors'.*tensors declare 6442450944 bytes but only \d+ are stored",
    "weights HDF5 of 6 GB (sparse)": r"model\.weights\.h5'.*declare 6442450944 bytes but only \d+ are stored",
    "vocab.txt of 89 MB": r"vocab\.txt'.*more than the 16777216 a vocabulary file",
    "tokenizer.json of 100 MB": r"tokenizer\.json'.*more than the 33554432 a tokenizer file",
    "weights HDF5 with 25,000 datasets": r"beyond 20000 objects",
    "CSV with a 1 GB line": r"train\.csv:2: the line is longer than 4194304 bytes",
    "JSON Lines with a 1 GB line": r"train\.jsonl:3: the line is longer than 4194304 bytes",
    "CoNLL with a 1 GB line": r"train\.conll:2: the line is longer than 4194304 bytes",
    # 4. Links out of the folder.
    "huggingface config.json links outside": r"config\.json'.*outside the folder",
    "vocab.txt links to a secret": r"vocab\.txt'.*outside the folder",
    "model.weights.h5 links to another HDF5 file": r"model\.weights\.h5'.*outside the folder",
    "model.safetensors links outside": r"model\.safetensors'.*outside the folder",
    "tokenizer_config.json links outside": r"tokenizer_config\.json'.*outside the folder",
    "vocab.txt links inside the folder": None,
    # 5. Content that used to raise RecursionError, AttributeError, TypeError or KeyError.
    "config.json nested 100,000 deep": r"config\.json'.*nested 100000 levels deep, more than the 64",
    "tokenizer.json nested 100,000 deep": r"tokenizer\.json'.*nested 10000\d levels deep",
    "safetensors header nested 100,000 deep": r"model\.safetensors.*nested 100000 levels deep",
    "HDF5 hard-link cycle": r"`backbone/loop` is a second link to an object already seen",
    "preset config.json is a JSON string": r"config\.json' must hold a JSON object\. Received: a JSON str",
    "huggingface config.json is a JSON list": r"config\.json must hold a JSON object\. Received: list",
    "huggingface classifier_dropout 'x'": r"config\.json: `classifier_dropout` must be null or a number",
    "huggingface num_labels 'three'": r"config\.json: `num_labels` must be an integer.*'three'",
    "tokenizer.json BertProcessing without sep": r"tokenizer\.json: post_processor \(BertProcessing\) `sep` must be",
    # Controls: the untouched folders load.
    "control: kbert preset": None,
    "control: huggingface folder": None,
}


# --- Building blocks -----------------------------------------------------------------------


def sparse_file(path, head, size):
    """A file of `size` apparent bytes that stores only `head` (the rest is a hole)."""
    with open(path, "wb") as file:
        file.write(head)
        file.truncate(size)


def replace_with_link(path, target):
    path.unlink()
    path.symlink_to(target)


def edit_json(path, change):
    value = json.loads(path.read_text())
    change(value)
    path.write_text(json.dumps(value))


def tokenizer_json(post_processor=None):
    return {
        "model": {
            "type": "WordPiece",
            "vocab": {token: index for index, token in enumerate(VOCABULARY)},
            "unk_token": "[UNK]",
        },
        "normalizer": {"type": "BertNormalizer", "lowercase": True},
        "post_processor": post_processor
        or {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
    }


def write_safetensors_header(path, header, size=None):
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    head = struct.pack("<Q", len(raw)) + raw
    sparse_file(path, head, size or len(head))


class Workspace:
    """Base folders built once (a kbert preset, a Hugging Face folder), copied per case."""

    def __init__(self, root):
        import numpy as np

        from kbert.checkpoints import export_huggingface
        from kbert.models import BertBackbone, BertClassifier
        from kbert.tokenizer.bert_tokenizer import BertTokenizer

        self.root = root
        self.outside = root / "outside"
        self.outside.mkdir()
        # Secrets a hostile folder would reach: the five special tokens (so a vocabulary
        # link to it would load) plus a secret; a JSON file; another weights file.
        self.secret = self.outside / "secret.txt"
        self.secret.write_text("".join(token + "\n" for token in VOCABULARY) + SECRET + "\n")
        self.secret_json = self.outside / "secret.json"
        # Not keras.utils.set_random_seed: it imports TensorFlow (800 MB), which
        # would swamp the memory measured here. kbert draws weights with NumPy.
        np.random.seed(0)
        tokenizer = BertTokenizer(VOCABULARY, max_length=16)
        self.preset = root / "base" / "preset"
        BertBackbone(**TINY).save_to_preset(self.preset, tokenizer=tokenizer)
        self.other_weights = self.outside / "other.h5"
        shutil.copy(self.preset / "model.weights.h5", self.other_weights)
        classifier = BertClassifier(BertBackbone(**TINY), label_names=["neg", "pos"])
        classifier.tokenizer = tokenizer
        self.huggingface = root / "base" / "huggingface"
        export_huggingface(classifier, self.huggingface)
        shutil.copy(self.huggingface / "config.json", self.secret_json)
        self.sentinels = {str(path) for path in (self.secret, self.secret_json, self.other_weights)}
        self.count = 0
        self.np = np

    def copy(self, base):
        self.count += 1
        folder = self.root / f"case{self.count:02d}" / base.name
        shutil.copytree(base, folder)
        return folder

    def destination(self, folder):
        return folder.parent / "converted"


# --- Cases: name -> function(workspace) returning the call to make -------------------------


def _cases():
    import h5py

    from kbert.checkpoints import convert
    from kbert.data import read_classification, read_conll
    from kbert.models import BertBackbone, BertClassifier, BertMaskedLM
    from kbert.models.preset_loading import load_checkpoint
    from kbert.tokenizer.bert_tokenizer import BertTokenizer

    cases = {}

    def case(name):
        def register(function):
            cases[name] = function
            return function

        return register

    @case("config.json links to /dev/zero")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        replace_with_link(folder / "config.json", "/dev/zero")
        return lambda: convert(folder, ws.destination(folder))

    @case("config.json is a FIFO")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        (folder / "config.json").unlink()
        os.mkfifo(folder / "config.json")
        return lambda: convert(folder, ws.destination(folder))

    @case("vocab.txt is a FIFO")
    def _(ws):
        folder = ws.copy(ws.preset)
        (folder / "vocab.txt").unlink()
        os.mkfifo(folder / "vocab.txt")
        return lambda: BertMaskedLM.from_preset(folder)

    @case("config.json of 2 GB (sparse)")
    def _(ws):
        folder = ws.copy(ws.preset)
        sparse_file(folder / "config.json", b'{"class_name": "', 2 * GIB)
        return lambda: convert(folder, ws.destination(folder))

    def preset_with_backbone(ws, **changes):
        folder = ws.copy(ws.preset)
        edit_json(folder / "config.json", lambda config: config["backbone"].update(changes))
        return lambda: BertBackbone.from_preset(folder)

    case("preset: vocabulary 10^6 x hidden 4096")(
        lambda ws: preset_with_backbone(ws, vocabulary_size=10**6, hidden_size=4096)
    )
    case("preset: 10^6 layers")(lambda ws: preset_with_backbone(ws, num_layers=10**6))
    case("preset: hidden_size 10^9")(
        lambda ws: preset_with_backbone(ws, hidden_size=10**9, num_heads=1)
    )

    @case("preset: num_classes 10^9")
    def _(ws):
        folder = ws.copy(ws.preset)

        def change(config):
            config["class_name"] = "BertClassifier"
            config["task"] = {"num_classes": 10**9}

        edit_json(folder / "config.json", change)
        return lambda: BertClassifier.from_preset(folder)

    def huggingface_with(ws, **changes):
        folder = ws.copy(ws.huggingface)

        def change(config):
            for key, value in changes.items():
                if value is None:
                    config.pop(key, None)
                else:
                    config[key] = value

        edit_json(folder / "config.json", change)
        return lambda: load_checkpoint(folder)

    case("huggingface: vocabulary 10^6 over small weights")(
        lambda ws: huggingface_with(ws, vocab_size=10**6)
    )
    case("huggingface: num_labels 10^9")(
        lambda ws: huggingface_with(ws, id2label=None, label2id=None, num_labels=10**9)
    )
    case("huggingface classifier_dropout 'x'")(
        lambda ws: huggingface_with(ws, classifier_dropout="x")
    )
    case("huggingface num_labels 'three'")(
        lambda ws: huggingface_with(ws, id2label=None, label2id=None, num_labels="three")
    )

    @case("keras-hub: hidden_dim 10^9")
    def _(ws):
        folder = ws.root / "keras_hub_case" / "preset"
        folder.mkdir(parents=True)
        config = {
            "module": "keras_hub.src.models.bert.bert_backbone",
            "class_name": "BertBackbone",
            "registered_name": "keras_hub>BertBackbone",
            "config": {
                "vocabulary_size": 40,
                "num_layers": 1,
                "num_heads": 2,
                "hidden_dim": 10**9,
                "intermediate_dim": 20,
            },
        }
        (folder / "config.json").write_text(json.dumps(config))
        with h5py.File(folder / "model.weights.h5", "w") as handle:
            handle["layers/token_embedding/vars/0"] = ws.np.zeros((40, 16), "float32")
        return lambda: load_checkpoint(folder)

    @case("pytorch zip entry inflating to 512 MB")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        (folder / "model.safetensors").unlink()
        # The layout of torch.save's zip container, its storage deflated from zeros.
        path = folder / "pytorch_model.bin"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
            archive.writestr("archive/version", b"3\n")
            with archive.open("archive/data/0", "w", force_zip64=True) as entry:
                zeros = bytes(2**20)
                for _ in range(512):
                    entry.write(zeros)
        return lambda: load_checkpoint(folder)

    @case("safetensors of 6 GB (sparse)")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        size = 6 * GIB
        header = {"w": {"dtype": "F32", "shape": [size // 4], "data_offsets": [0, size]}}
        raw = json.dumps(header).encode()
        write_safetensors_header(folder / "model.safetensors", raw, 8 + len(raw) + size)
        return lambda: load_checkpoint(folder)

    @case("weights HDF5 of 6 GB (sparse)")
    def _(ws):
        folder = ws.copy(ws.preset)
        path = folder / "model.weights.h5"
        path.unlink()
        with h5py.File(path, "w") as handle:
            space = h5py.h5s.create_simple((6 * GIB // 4,))
            plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            plist.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
            plist.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
            h5py.h5d.create(handle.id, b"huge", h5py.h5t.IEEE_F32LE, space, plist)
        return lambda: BertBackbone.from_preset(folder)

    @case("vocab.txt of 89 MB")
    def _(ws):
        folder = ws.copy(ws.preset)
        head = "".join(token + "\n" for token in VOCABULARY).encode()
        sparse_file(folder / "vocab.txt", head, 89 * 2**20)
        return lambda: BertTokenizer.from_preset(folder)

    @case("tokenizer.json of 100 MB")
    def _(ws):
        folder = ws.root / "tokenizer_json_huge"
        folder.mkdir()
        sparse_file(folder / "tokenizer.json", b'{"model": {"vocab": {', 100 * 2**20)
        return lambda: BertTokenizer.from_preset(folder)

    @case("weights HDF5 with 25,000 datasets")
    def _(ws):
        folder = ws.copy(ws.preset)
        with h5py.File(folder / "model.weights.h5", "a") as handle:
            group = handle.create_group("many")
            empty = group.create_dataset("d0", shape=(0,), dtype="f4")
            for index in range(1, 25_000):
                group[f"d{index}"] = empty
        return lambda: BertBackbone.from_preset(folder)

    def data_file(ws, name, head):
        folder = ws.root / f"data_{name}"
        folder.mkdir()
        sparse_file(folder / name, head, GIB)
        return folder / name

    @case("CSV with a 1 GB line")
    def _(ws):
        path = data_file(ws, "train.csv", b"text,label\n")
        return lambda: read_classification(path)

    @case("JSON Lines with a 1 GB line")
    def _(ws):
        path = data_file(ws, "train.jsonl", b'{"text": "a", "label": "x"}\n\n{"text": "')
        return lambda: read_classification(path)

    @case("CoNLL with a 1 GB line")
    def _(ws):
        path = data_file(ws, "train.conll", b"EU B-ORG\n")
        return lambda: read_conll(path)

    @case("huggingface config.json links outside")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        replace_with_link(folder / "config.json", ws.secret_json)
        return lambda: convert(folder, ws.destination(folder))

    @case("vocab.txt links to a secret")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        replace_with_link(folder / "vocab.txt", ws.secret)
        return lambda: convert(folder, ws.destination(folder))

    @case("model.weights.h5 links to another HDF5 file")
    def _(ws):
        folder = ws.copy(ws.preset)
        replace_with_link(folder / "model.weights.h5", ws.other_weights)
        return lambda: BertBackbone.from_preset(folder)

    @case("model.safetensors links outside")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        outside = ws.outside / "weights.safetensors"
        shutil.copy(folder / "model.safetensors", outside)
        ws.sentinels.add(str(outside))
        replace_with_link(folder / "model.safetensors", outside)
        return lambda: convert(folder, ws.destination(folder))

    @case("tokenizer_config.json links outside")
    def _(ws):
        folder = ws.copy(ws.preset)
        replace_with_link(folder / "tokenizer_config.json", ws.secret_json)
        return lambda: BertTokenizer.from_preset(folder)

    @case("vocab.txt links inside the folder")
    def _(ws):
        folder = ws.copy(ws.preset)
        os.rename(folder / "vocab.txt", folder / "real_vocab.txt")
        (folder / "vocab.txt").symlink_to("real_vocab.txt")
        return lambda: BertTokenizer.from_preset(folder)

    @case("config.json nested 100,000 deep")
    def _(ws):
        folder = ws.copy(ws.preset)
        (folder / "config.json").write_text("[" * 100_000 + "]" * 100_000)
        return lambda: convert(folder, ws.destination(folder))

    @case("tokenizer.json nested 100,000 deep")
    def _(ws):
        folder = ws.root / "tokenizer_json_deep"
        folder.mkdir()
        (folder / "tokenizer.json").write_text('{"model": ' + "[" * 100_000 + "]" * 100_000 + "}")
        return lambda: BertTokenizer.from_preset(folder)

    @case("safetensors header nested 100,000 deep")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        raw = ("[" * 100_000 + "]" * 100_000).encode()
        write_safetensors_header(folder / "model.safetensors", raw)
        return lambda: load_checkpoint(folder)

    @case("HDF5 hard-link cycle")
    def _(ws):
        folder = ws.copy(ws.preset)
        with h5py.File(folder / "model.weights.h5", "a") as handle:
            handle["backbone/loop"] = handle["backbone"]
        return lambda: BertBackbone.from_preset(folder)

    @case("preset config.json is a JSON string")
    def _(ws):
        folder = ws.copy(ws.preset)
        (folder / "config.json").write_text('"a string"')
        return lambda: BertBackbone.from_preset(folder)

    @case("huggingface config.json is a JSON list")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        (folder / "config.json").write_text("[1, 2]")
        return lambda: convert(folder, ws.destination(folder))

    @case("tokenizer.json BertProcessing without sep")
    def _(ws):
        folder = ws.root / "tokenizer_json_no_sep"
        folder.mkdir()
        document = tokenizer_json({"type": "BertProcessing", "cls": ["[CLS]", 2]})
        (folder / "tokenizer.json").write_text(json.dumps(document))
        return lambda: BertTokenizer.from_preset(folder)

    @case("control: kbert preset")
    def _(ws):
        folder = ws.copy(ws.preset)
        return lambda: BertMaskedLM.from_preset(folder)

    @case("control: huggingface folder")
    def _(ws):
        folder = ws.copy(ws.huggingface)
        return lambda: convert(folder, ws.destination(folder))

    return cases


# --- Running -------------------------------------------------------------------------------


class _Timeout(BaseException):
    pass


def _watch_opens(sentinels, opened):
    """Records every open of a sentinel path through Python's and the libraries' entry points."""
    import h5py
    import safetensors.numpy

    def watched(function):
        def wrapper(target, *args, **kwargs):
            if isinstance(target, (str, os.PathLike)):
                real = os.path.realpath(target)
                if real in sentinels:
                    opened.append(real)
            return function(target, *args, **kwargs)

        return wrapper

    builtins.open = io.open = watched(builtins.open)
    os.open = watched(os.open)
    safetensors.numpy.load_file = watched(safetensors.numpy.load_file)
    original_file_init = h5py.File.__init__

    def file_init(self, name, *args, **kwargs):
        watched(lambda *a, **k: None)(name)
        original_file_init(self, name, *args, **kwargs)

    h5py.File.__init__ = file_init


def peak_memory_bytes():
    """This process's peak resident memory.

    `resource.getrusage(RUSAGE_SELF).ru_maxrss`, except on Linux, where that figure
    survives `execve`: a worker started by a large pytest process (TensorFlow loaded)
    would report its parent's size at the fork. There the high-water mark of this
    program's own memory map (`VmHWM`, reset by `execve`) is used.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_worker(root):
    root = pathlib.Path(root)
    workspace = Workspace(root)
    cases = _cases()
    assert set(cases) == set(EXPECTED), set(cases) ^ set(EXPECTED)
    actions = {name: build(workspace) for name, build in cases.items()}
    opened = []
    _watch_opens({os.path.realpath(path) for path in workspace.sentinels}, opened)

    def alarm(signum, frame):
        raise _Timeout()

    signal.signal(signal.SIGALRM, alarm)
    results = {}
    for name, action in actions.items():
        start = time.monotonic()
        signal.alarm(CASE_SECONDS)
        try:
            action()
            outcome = {"error": None, "message": ""}
        except _Timeout:
            outcome = {"error": "timeout", "message": f"still running after {CASE_SECONDS} s"}
        except Exception as error:  # each outcome is judged by the test
            outcome = {
                "error": type(error).__name__,
                "is_value_or_os_error": isinstance(error, (ValueError, OSError)),
                "message": str(error),
                "traceback": traceback.format_exc(limit=-3),
            }
        finally:
            signal.alarm(0)
        outcome["seconds"] = round(time.monotonic() - start, 3)
        outcome["peak_after_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        results[name] = outcome
    peak = peak_memory_bytes()
    # Files kbert wrote (a converted preset) must not hold the secret. The sparse
    # giants are not read: nothing is written that large.
    leaked = [
        str(path)
        for path in root.rglob("*")
        if path.is_file()
        and not path.is_symlink()
        and not str(path).startswith(str(workspace.outside))
        and path.stat().st_size < 2**20
        and SECRET.encode() in path.read_bytes()
    ]
    print(json.dumps({"results": results, "peak_rss_bytes": peak, "opened": opened, "leaked": leaked}))


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    run_worker(sys.argv[1])
