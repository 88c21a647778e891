"""File dialogs that start where the user last was, across restarts."""

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog

from kbert_gui.services.file_dialogs import FileDialogs


def _settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_file_dialogs_start_beside_the_last_choice_of_their_kind_after_a_restart(
    tmp_path, monkeypatch
):
    exports = tmp_path / "exports"
    exports.mkdir()
    started_in = []

    def save_dialog(parent, title, start, file_filter):
        started_in.append(start)
        return str(exports / "predictions.csv"), file_filter

    def folder_dialog(parent, title, start):
        started_in.append(start)
        return str(tmp_path / "runs" / "sentiment")

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", folder_dialog)
    dialogs = FileDialogs(_settings(tmp_path))
    home = FileDialogs(_settings(tmp_path)).folder("exports")
    assert dialogs.save_file(None, "Export", "CSV files (*.csv)", "exports", "x.csv") == str(
        exports / "predictions.csv"
    )
    assert started_in == [f"{home}/x.csv"]
    (tmp_path / "runs").mkdir()
    dialogs.existing_folder(None, "Open", "models")

    # A new settings object on the same file: what a restarted app reads.
    restarted = FileDialogs(_settings(tmp_path))
    assert restarted.folder("exports") == str(exports)
    assert restarted.folder("models") == str(tmp_path / "runs")
    restarted.save_file(None, "Export", "CSV files (*.csv)", "exports", "y.csv")
    assert started_in[-1] == str(exports / "y.csv")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args: ("", ""))
    assert restarted.save_file(None, "Export", "CSV files (*.csv)", "exports") is None
