"""What the window writes about itself: About, the README for Help ▸ Documentation.

No widgets here: the About text is a function of an `EnvironmentInfo`, so that each
line can be checked on its own.
"""

import html
import importlib.metadata
import pathlib

from kbert.optional_packages import DISTRIBUTION

PROJECT_SUMMARY = (
    "BERT as a Keras 3 package on JAX, TensorFlow and PyTorch, with this desktop app "
    "for using, comparing and fine-tuning models."
)
# A source checkout (an editable install) has the README beside the packages.
CHECKOUT_README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def about_html(kbert_version, environment):
    """The About box: kbert's version, and Keras', the backend and the device once known.

    Args:
        kbert_version: `kbert.__version__`.
        environment: the `EnvironmentInfo`, or None while Keras is still loading.
    """
    lines = [f"<h3>kbert {html.escape(kbert_version)}</h3>", f"<p>{PROJECT_SUMMARY}</p>"]
    if environment is None:
        lines.append("<p>Keras, the backend and the device: still loading…</p>")
    else:
        lines.append(
            "<p>"
            f"Keras {html.escape(environment.keras_version)}<br>"
            f"Backend: {html.escape(environment.backend)}<br>"
            f"Device: {html.escape(environment.device)}"
            "</p>"
        )
    lines.append(
        "<p>Change the backend with <code>kbert gui --backend torch</code> (or "
        "<code>KERAS_BACKEND</code>).</p>"
    )
    return "\n".join(lines)


def readme():
    """`(markdown, folder)`: the README of this checkout, else of the installed package.

    `folder` holds the README's relative links (its pictures), or None for the copy
    inside the package's metadata.
    """
    if CHECKOUT_README.is_file():
        return CHECKOUT_README.read_text(encoding="utf-8"), CHECKOUT_README.parent
    try:
        metadata = importlib.metadata.metadata(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "The README is not installed with this copy of kbert.", None
    return metadata.get_payload() or metadata.get("Description", ""), None
