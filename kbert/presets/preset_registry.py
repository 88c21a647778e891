"""The built-in presets: kbert presets shipped inside the package."""

import pathlib

# Built-in presets ship inside the package (package data of the wheel).
BUILTIN_DIR = pathlib.Path(__file__).resolve().parent / "builtin"

# Built-in presets: name -> folder.
BUILTIN_PRESETS = {
    # BERT-tiny pretrained by kbert on Jane Austen's novels and the King James Bible
    # (scripts/build_demo_model.sh);
    # the default model of the command line and the app.
    "demo": BUILTIN_DIR / "demo",
}
