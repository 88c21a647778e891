"""Where preset names point: a folder path, or a preset that ships with kbert."""

import pathlib

ASSETS_DIR = pathlib.Path(__file__).resolve().parents[2] / "assets"

# Built-in presets: name -> folder. Later issues add the bundled demo model here.
BUILTIN_PRESETS = {}

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.weights.h5"
METADATA_FILE = "metadata.json"


def resolve_preset(preset):
    """The folder of `preset`, a folder path or the name of a built-in preset.

    Raises:
        ValueError: when `preset` is neither an existing folder nor a known name.
    """
    if isinstance(preset, pathlib.Path) or isinstance(preset, str):
        path = pathlib.Path(preset).expanduser()
        if path.is_dir():
            return path
        if isinstance(preset, str) and preset in BUILTIN_PRESETS:
            return pathlib.Path(BUILTIN_PRESETS[preset])
        if path.exists():
            raise ValueError(f"A preset must be a folder. Received a file: {str(path)!r}")
    else:
        raise ValueError(
            f"`preset` must be a folder path or a preset name. Received: {type(preset).__name__}"
        )
    known = sorted(BUILTIN_PRESETS)
    raise ValueError(
        f"Unknown preset {str(preset)!r}: no such folder, and not a built-in preset "
        f"(known names: {known})."
    )
