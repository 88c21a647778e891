"""A training file the reader rejects does not keep the previous file's column mapping."""

from fine_tuning_helpers import data  # noqa: F401 (a fixture)
from fine_tuning_helpers import tab  # noqa: F401 (a fixture)

PREVIEW_TIMEOUT_MS = 20_000


def _wait_for_preview(qtbot, tab, path):
    qtbot.waitUntil(
        lambda: tab.preview is not None and tab.preview.path == str(path),
        timeout=PREVIEW_TIMEOUT_MS,
    )


def test_a_latin1_file_after_a_utf8_one_keeps_no_columns_of_it(tab, qtbot, tmp_path):
    first = tmp_path / "reviews.csv"
    first.write_text("review,stars\na lovely cat,pos\na dull dog,neg\n", encoding="utf-8")
    tab.set_training_file(first)
    _wait_for_preview(qtbot, tab, first)
    qtbot.waitUntil(
        lambda: tab.column_form.columns() == ("review", "stars"), timeout=PREVIEW_TIMEOUT_MS
    )

    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes("texte,étiquette\nCrème brûlée,pos\n".encode("latin-1"))
    tab.set_training_file(latin1)
    qtbot.waitUntil(
        lambda: "not valid UTF-8" in tab.error_banner.message, timeout=PREVIEW_TIMEOUT_MS
    )
    # The rejected file's columns are unknown: none of reviews.csv's are offered or mapped.
    assert tab.column_form.columns() == ()
    assert tab.column_form.mapping() is None
    assert tab.run_controller._problem(resume=False) is not None
    # Back to the first file: its columns come back.
    tab.set_training_file(first)
    qtbot.waitUntil(
        lambda: tab.column_form.columns() == ("review", "stars"), timeout=PREVIEW_TIMEOUT_MS
    )
