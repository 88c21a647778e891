"""The demo corpus' readers in scripts/ (what scripts/build_demo_model.sh runs).

The Debian packages themselves are not reachable in tests: each reader is checked on a
small file of the same format written here (a SWORD module, a KJV listing, a Project
Gutenberg novel), and the deduplication on the layout create-pretraining-data reads.
The scripts are not part of the package; their folder goes on the import path, as when
they run.
"""

import struct
import zlib
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture
def scripts(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))


# --- Repeated and held-out paragraphs ------------------------------------------------------

LONG = "one two three four five six seven eight"


def test_dedupe_drops_repeats_and_keeps_the_widest_break(scripts):
    from dedupe_corpus import dedupe

    text = (
        f"A {LONG}.\n\nB {LONG}.\n\n\n"  # a chapter ends after B
        f"C {LONG}.\n\n\n\n"  # a document ends after C
        f"a  {LONG}!\n\n"  # A again (case, spacing and punctuation aside), then a short line
        "Selah.\n\nSelah.\n\n\n"
    )
    deduped, dropped = dedupe(text, set(), min_words=8)
    assert dropped == 1
    # The document break after C stays where it was, though the next paragraph went.
    assert deduped == (
        f"A {LONG}.\n\nB {LONG}.\n\n\nC {LONG}.\n\n\n\nSelah.\n\nSelah.\n\n\n"
    )


def test_dedupe_removes_held_out_paragraphs_from_training_files(scripts, tmp_path, monkeypatch):
    import sys

    import dedupe_corpus

    heldout = tmp_path / "heldout.txt"
    heldout.write_text(f"Held {LONG}.\n\n\n", encoding="utf-8")
    train = tmp_path / "train.txt"
    train.write_text(f"Kept {LONG}.\n\nHELD {LONG}\n\n\n", encoding="utf-8")
    monkeypatch.setattr(
        sys, "argv", ["dedupe_corpus", "--heldout", str(heldout), "--", str(train)]
    )
    dedupe_corpus.main()
    assert train.read_text(encoding="utf-8") == f"Kept {LONG}.\n\n\n"
    assert heldout.read_text(encoding="utf-8") == f"Held {LONG}.\n\n\n"


# --- SWORD commentaries --------------------------------------------------------------------


def _kjv_listing(path, chapters_per_book=2, verses_per_chapter=2):
    """A KJV-shaped listing: 66 books (39 of them the Old Testament's)."""
    lines = []
    for book in range(66):
        name = f"B{chr(ord('a') + book // 26)}{chr(ord('a') + book % 26)}"
        for chapter in range(1, chapters_per_book + 1):
            for verse in range(1, verses_per_chapter + 1):
                lines.append(f"{name}{chapter}:{verse} Verse text.")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_module(folder, testament, entries, width):
    """A zCom module's three files for one testament: `entries` (markup or None) in one
    zlib block; consecutive equal strings share one location, as SWORD links them."""
    block, index, locations = b"", b"", {}
    for number, entry in enumerate(entries):
        if entry is None:
            index += struct.pack("<IIH" if width == 10 else "<III", 0, 0, 0)
            continue
        data = entry.encode("utf-8")
        linked = number and entries[number - 1] == entry
        if not linked:
            locations[number] = (len(block), len(data))
            block += data
        else:
            locations[number] = locations[number - 1]
        offset, size = locations[number]
        index += struct.pack("<IIH" if width == 10 else "<III", 0, offset, size)
    compressed = zlib.compress(block)
    (folder / f"{testament}.bzs").write_bytes(struct.pack("<III", 0, len(compressed), len(block)))
    (folder / f"{testament}.bzv").write_bytes(index)
    (folder / f"{testament}.bzz").write_bytes(compressed)


@pytest.mark.parametrize("width", [10, 12])
def test_sword_commentary_becomes_books_chapters_and_paragraphs(scripts, tmp_path, width):
    import sword_corpus

    listing = tmp_path / "kjv.txt"
    _kjv_listing(listing)
    layout = sword_corpus.chapter_layout(listing)
    assert len(layout) == 66 and layout[0] == [2, 2]
    module = tmp_path / "module"
    module.mkdir()
    for testament, keys in zip(("ot", "nt"), sword_corpus.entry_keys(layout)):
        # per book: heading, then per chapter: heading and two verses
        assert len(keys) == 2 + (39 if testament == "ot" else 27) * (1 + 2 * 3)
        entries = [None] * len(keys)
        for number, key in enumerate(keys):
            if key is not None and key[1] and keys[number - 1] != key:  # a chapter heading
                book, chapter = key
                entries[number + 1] = entries[number + 2] = (  # both verses share one entry
                    f'<title type="x-s">Outline</title><div type="x-p" sID="a"/>'
                    f"Book {book} chapter {chapter} is explained here &amp; at length"
                    f' <note n="1">a footnote</note>.<div type="x-p" eID="a"/>'
                    f'<div type="x-p" sID="b"/>A second paragraph of the chapter<div eID="b"/>'
                )
        _write_module(module, testament, entries, width)
    books = sword_corpus.commentary_books(module, layout)
    assert [book for book, _ in books] == list(range(66))
    first_book = dict(books[0][1])
    assert sorted(first_book) == [1, 2]
    assert first_book[2] == [
        "Book 0 chapter 2 is explained here & at length.",  # the linked entry only once
        "A second paragraph of the chapter",
    ]


def test_sword_reader_refuses_another_versification(scripts, tmp_path):
    import sword_corpus

    module = tmp_path / "module"
    module.mkdir()
    _write_module(module, "ot", ["<p>x y z</p>"] * 7, 10)
    with pytest.raises(ValueError, match="versification"):
        sword_corpus.read_entries(module, "ot", 24115)


def test_sword_corpus_holds_out_the_bibles_held_out_chapters(scripts, tmp_path, monkeypatch):
    import sys

    import sword_corpus

    listing = tmp_path / "kjv.txt"
    _kjv_listing(listing, chapters_per_book=5, verses_per_chapter=1)
    layout = sword_corpus.chapter_layout(listing)
    books = [(book, {chapter: [f"On book {book} chapter {chapter} here"] for chapter in range(6)})
             for book in range(66)]
    monkeypatch.setattr(sword_corpus, "commentary_books", lambda folder, layout: books)
    train, heldout = tmp_path / "train.txt", tmp_path / "heldout.txt"
    monkeypatch.setattr(
        sys, "argv", ["sword_corpus", "m", str(listing), str(train), str(heldout)]
    )
    sword_corpus.main()
    held = heldout.read_text(encoding="utf-8")
    # Chapters are counted through the whole Bible, as scripts/kjv_corpus.py counts them:
    # with five a book, the 10th is book 1's 5th, the 20th book 3's 5th.
    assert "On book 1 chapter 5 here" in held and "On book 3 chapter 5 here" in held
    assert "On book 0 chapter 5 here" not in held
    assert "chapter 0" not in held  # a book's introduction is trained on
    assert held.count("here") == 66 * 5 // 10
    assert "On book 1 chapter 5 here" not in train.read_text(encoding="utf-8")


# --- Novels ----------------------------------------------------------------------------------


def test_novel_chapters_leave_out_title_pages_and_the_gutenberg_licence(scripts):
    from novels_corpus import chapters

    lines = (
        "The Project Gutenberg EBook of A Novel\n\nCONTENTS\n\n"
        "CHAPTER 1. Beginnings.\n\nCall me _Ishmael_. Some\nyears ago.\n\nMore.\n\n"
        "CHAPTER 2. Ends.\n\nThe end.\n\nEpilogue\n\nOne survived.\n"
        "End of Project Gutenberg's A Novel\n\nThis eBook is for the use of anyone"
    ).split("\n")
    assert list(chapters(lines)) == [
        ["Call me Ishmael. Some years ago.", "More."],
        ["The end."],
        ["One survived."],
    ]
