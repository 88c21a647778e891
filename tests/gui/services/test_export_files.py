"""The app's export writers: files that parse back to what was exported."""

import csv
import json

from PySide6.QtWidgets import QLabel

from kbert_gui.services.export_files import ExportAction
from kbert_gui.services.export_files import image_actions
from kbert_gui.services.export_files import write_csv
from kbert_gui.services.export_files import write_json


def test_tables_and_structures_parse_back(tmp_path):
    rows = [{"token": "cat", "probability": 0.5}, {"token": "dog, \"x\"", "probability": None}]
    write_csv(tmp_path / "rows.csv", ["token", "probability"], rows)
    with open(tmp_path / "rows.csv", newline="", encoding="utf-8") as handle:
        assert list(csv.DictReader(handle)) == [
            {"token": "cat", "probability": "0.5"},
            {"token": "dog, \"x\"", "probability": ""},
        ]
    write_json(tmp_path / "value.json", {"rows": rows, "path": tmp_path})
    assert json.loads((tmp_path / "value.json").read_text()) == {"rows": rows, "path": str(tmp_path)}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["rows.csv", "value.json"]


def test_widgets_export_as_png_and_svg(qtbot, tmp_path):
    label = QLabel("kbert")
    qtbot.addWidget(label)
    label.resize(120, 40)
    png, svg = image_actions("Label", label)
    png.write(png.path_for(tmp_path / "label"))
    svg.write(svg.path_for(tmp_path / "label"))
    assert (tmp_path / "label.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (tmp_path / "label.svg").read_bytes()
    assert ExportAction("x", "", ".csv", print).path_for(tmp_path / "a.txt").name == "a.txt"
