"""The built-in presets: kbert presets shipped inside the package."""

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
}
