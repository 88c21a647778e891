"""What the app exports, and how: one `ExportAction` per thing a tab can save.

Every tab that has something to save offers `export_actions()`, a list of
`ExportAction`s; the main window's File > Export menu lists the current tab's. The
writers here are the only code that writes export files: tables as CSV, structures
as JSON, widgets as PNG or SVG, logs as text, each through kbert's atomic writer
(`kbert.files.atomic_write`: a temporary file beside the target, renamed over it), so a
failed export never leaves half a file.
"""

import csv
import dataclasses
import io
import json
import pathlib
from collections.abc import Callable

from PySide6.QtCore import QBuffer
from PySide6.QtCore import QByteArray
from PySide6.QtCore import QIODevice
from PySide6.QtCore import QPoint
from PySide6.QtCore import QRectF
from PySide6.QtCore import QSize
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator

from kbert.files.atomic_write import atomic_path
from kbert.files.atomic_write import write_bytes_atomically

# Space around an exported picture's caption, in pixels.
CAPTION_PADDING = 6


@dataclasses.dataclass(frozen=True)
class ExportAction:
    """One thing a tab can save.

    Attributes:
        label: the menu text, e.g. "Predictions as CSV…".
        file_filter: the file dialog's filter, e.g. "CSV files (*.csv)".
        suffix: the extension added when the chosen name has none, e.g. ".csv".
        write: `write(path)`, writing the file (a `pathlib.Path`).
        available: `available()`, whether there is something to save now.
    """

    label: str
    file_filter: str
    suffix: str
    write: Callable
    available: Callable = lambda: True

    def path_for(self, chosen):
        """The path to write for a name chosen in the dialog (the suffix added if none)."""
        path = pathlib.Path(chosen)
        return path if path.suffix else path.with_suffix(self.suffix)


def write_csv(path, columns, rows):
    """A CSV table: a header of `columns`, then one line per row (dicts keyed by column)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(column) is None else row.get(column) for column in columns])
    write_bytes_atomically(path, buffer.getvalue().encode("utf-8"))


def write_json(path, value):
    """`value` (dicts, lists, numbers, strings) as indented UTF-8 JSON."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=_plain) + "\n"
    write_bytes_atomically(path, text.encode("utf-8"))


def write_text(path, text):
    write_bytes_atomically(path, text.encode("utf-8"))


def write_image(path, widget, caption=""):
    """The widget as drawn now: PNG for ".png", vector SVG for ".svg", with `caption`
    (what the picture shows, e.g. the model, layer and head) on a line below it."""
    path = pathlib.Path(path)
    if path.suffix.lower() == ".svg":
        buffer = io.BytesIO()
        _render_svg(widget, caption, buffer)
        write_bytes_atomically(path, buffer.getvalue())
        return
    # grab() lays out a widget that was never shown before it paints it.
    picture = widget.grab()
    if caption:
        ratio = picture.devicePixelRatio()
        size = _picture_size(widget, caption)
        image = QImage(size * ratio, QImage.Format.Format_ARGB32)
        image.setDevicePixelRatio(ratio)
        image.fill(widget.palette().base().color())
        painter = QPainter(image)
        try:
            painter.drawPixmap(0, 0, picture)
            _paint_caption(painter, widget, caption)
        finally:
            painter.end()
        picture = image
    with atomic_path(path) as temporary:
        if not picture.save(str(temporary), "PNG"):
            raise OSError(f"Could not write the image {str(path)!r}.")


def image_actions(name, widget, available=lambda: True, caption=lambda: ""):
    """The actions "`name` as PNG…" and "`name` as SVG…" for `widget`; `caption()` is
    the line written below the picture ("" for none)."""
    return [
        ExportAction(
            f"{name} as {kind}…",
            f"{kind} images (*{suffix})",
            suffix,
            lambda path: write_image(path, widget, caption()),
            available,
        )
        for kind, suffix in (("PNG", ".png"), ("SVG", ".svg"))
    ]


def data_actions(name, table, document, available=lambda: True):
    """The actions "`name` as CSV…" and "`name` as JSON…".

    Args:
        name: what is saved, e.g. "Predictions".
        table: `table()` returns `(columns, rows)` for the CSV (rows: dicts by column).
        document: `document()` returns the JSON value.
        available: `available()`, whether there is something to save now.
    """
    return [
        ExportAction(
            f"{name} as CSV…",
            "CSV files (*.csv)",
            ".csv",
            lambda path: write_csv(path, *table()),
            available,
        ),
        ExportAction(
            f"{name} as JSON…",
            "JSON files (*.json)",
            ".json",
            lambda path: write_json(path, document()),
            available,
        ),
    ]


def _picture_size(widget, caption):
    """The widget's size, and a line more for a caption."""
    extra = widget.fontMetrics().height() + 2 * CAPTION_PADDING if caption else 0
    return QSize(widget.width(), widget.height() + extra)


def _paint_caption(painter, widget, caption):
    """`caption` on the line below the widget's picture."""
    if caption:
        size = _picture_size(widget, caption)
        strip = QRectF(0, widget.height(), size.width(), size.height() - widget.height())
        painter.fillRect(strip, widget.palette().base())
        painter.setPen(widget.palette().text().color())
        painter.setFont(widget.font())
        text_area = strip.adjusted(CAPTION_PADDING, 0, -CAPTION_PADDING, 0)
        alignment = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(text_area, alignment, caption)


def _render_svg(widget, caption, stream):
    data = QByteArray()
    device = QBuffer(data)
    device.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(device)
    size = _picture_size(widget, caption)
    generator.setSize(size)
    generator.setViewBox(QRectF(0, 0, size.width(), size.height()))
    if caption:
        generator.setDescription(caption)
    painter = QPainter(generator)
    try:
        widget.render(painter, QPoint(0, 0))
        _paint_caption(painter, widget, caption)
    finally:
        painter.end()
    device.close()
    stream.write(bytes(data))


def _plain(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, pathlib.Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
