"""The built-in presets: kbert presets shipped inside the package."""

import json
import pathlib

# Built-in presets ship inside the package (package data of the wheel).
BUILTIN_DIR = pathlib.Path(__file__).resolve().parent / "builtin"

# Built-in presets: name -> folder.
BUILTIN_PRESETS = {
    # BERT-mini pretrained by kbert on six public-domain English texts of the Debian
    # archive (scripts/build_demo_model.sh); the default model of the command line and the app.
    "demo": BUILTIN_DIR / "demo",
    # The previous demo, a BERT-tiny on Austen and the Bible (same vocabulary), kept so the
    # app's "Compare with" shows what size and data change.
    "demo-tiny": BUILTIN_DIR / "demo_tiny",
    # `demo` fine-tuned on the SMS Spam Collection (scripts/build_task_models.py): the
    # default model of `kbert classify`.
    "demo-spam": BUILTIN_DIR / "demo_spam",
}


def builtin_class_name(name):
    """The model class (e.g. "BertClassifier") of the built-in preset `name`.

    Read from its `config.json` alone: no Keras, no weights.
    """
    config = json.loads((BUILTIN_PRESETS[name] / "config.json").read_text(encoding="utf-8"))
    return config["class_name"]
