"""Public-domain Bible commentaries as pretraining text, read from Debian's SWORD modules.

Debian packages SWORD modules (`sword-comm-mhcc`: Matthew Henry's Concise Commentary,
`sword-comm-tdavid`: C. H. Spurgeon's Treasury of David, `sword-comm-scofield`: the
Scofield Reference Notes of 1917, all public domain) as compressed verse-keyed files.
This reads them without the SWORD library: per testament a block index (`.?zs`: offset,
compressed and plain size of each zlib block), a verse index (`.?zv`: block, offset and
size of each entry, 10 or 12 bytes) and the blocks (`.?zz`). Entries follow the KJV
versification: the module heading, the testament heading, then per book its heading and
per chapter its heading and verses; the chapter and verse counts come from the KJV
listing scripts/kjv_corpus.py reads, so the layout is checked against the file sizes.

The OSIS markup becomes plain paragraphs (titles, outline tables and notes left out);
an entry shared by a range of verses is written once. The layout is the one
`kbert create-pretraining-data --split-sentences --document-break 3` reads (as
scripts/novels_corpus.py writes): one paragraph per line, a blank line between
paragraphs, two between chapters, three between documents (the commentary on one book
of the Bible). The commentary on every `--heldout-every`-th chapter of the Bible,
counted as scripts/kjv_corpus.py counts them, goes to the held-out file: those are the
chapters whose verses the Bible's held-out file holds, and a commentary quotes the
verses it explains, so none of them may be trained on.

Usage: python scripts/sword_corpus.py MODULE_DIR KJV_VERSES.txt TRAIN.txt HELDOUT.txt
       [--heldout-every N]
"""

import argparse
import html
import os
import re
import struct
import zlib

import kjv_corpus

_DROPPED = re.compile(
    r"<(title|table|note|milestone)\b[^>]*?(/>|>.*?</\1>)", re.DOTALL | re.IGNORECASE
)
_BREAK = re.compile(r"<(div|p|lb|l|lg|item)\b[^>]*>|</(div|p|l|lg|item)>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCTUATION = re.compile(r" (?=[.,;:!?])")


def chapter_layout(verses_path):
    """[(book number, [verses in chapter 1, 2, ...]), ...] of the KJV listing, in order."""
    with open(verses_path, encoding="utf-8") as handle:
        return [
            [len(chapter) for chapter in chapters]
            for _, chapters in kjv_corpus.books(handle)
        ]


def entry_keys(layout):
    """Per testament (OT: 39 books, NT: the rest), the key of every verse-index entry:
    (book, chapter) for chapter headings and verses (chapter 0: a book's heading), None
    for the module and testament headings."""
    for books in (range(0, 39), range(39, len(layout))):
        keys = [None, None]
        for book in books:
            keys.append((book, 0))
            for chapter, verses in enumerate(layout[book], 1):
                keys.extend([(book, chapter)] * (verses + 1))
        yield keys


def read_entries(module_dir, testament, count):
    """The `count` entries of one testament's files (plain strings, "" where empty) and
    each entry's location in the blocks, so that linked entries can be told apart."""
    names = sorted(os.listdir(module_dir))
    prefix = next(
        name[: -len("zs")] for name in names if re.fullmatch(rf"{testament}\.[a-z]zs", name)
    )
    with open(os.path.join(module_dir, prefix + "zs"), "rb") as handle:
        block_index = handle.read()
    with open(os.path.join(module_dir, prefix + "zv"), "rb") as handle:
        verse_index = handle.read()
    with open(os.path.join(module_dir, prefix + "zz"), "rb") as handle:
        data = handle.read()
    if len(verse_index) not in (10 * count, 12 * count):
        raise ValueError(
            f"{module_dir}: {len(verse_index)} bytes of verse index for {count} KJV entries "
            "(not a module in the KJV versification?)"
        )
    width = len(verse_index) // count
    layout = "<IIH" if width == 10 else "<III"
    blocks, entries = {}, []
    for position in range(0, len(verse_index), width):
        block, offset, size = struct.unpack_from(layout, verse_index, position)
        if size == 0:
            entries.append(("", None))
            continue
        if block not in blocks:
            start, compressed, _ = struct.unpack_from("<III", block_index, 12 * block)
            blocks[block] = zlib.decompress(data[start : start + compressed])
        text = blocks[block][offset : offset + size].decode("utf-8", "replace")
        entries.append((text, (block, offset, size)))
    return entries


def paragraphs(markup):
    """The plain paragraphs of one entry's OSIS markup."""
    text = _BREAK.sub("\n", _DROPPED.sub(" ", markup))
    found = []
    for line in html.unescape(_TAG.sub(" ", text)).split("\n"):
        line = _SPACE_BEFORE_PUNCTUATION.sub("", _SPACE.sub(" ", line).strip())
        if len(line.split()) >= 3:  # a lone verse number or heading fragment is no prose
            found.append(line)
    return found


def commentary_books(module_dir, layout):
    """[(book, {chapter: [paragraph, ...]}), ...] in the order of the Bible."""
    books = {}
    for testament, keys in zip(("ot", "nt"), entry_keys(layout)):
        seen = set()
        for (markup, location), key in zip(read_entries(module_dir, testament, len(keys)), keys):
            if key is None or location is None or location in seen:
                continue
            seen.add(location)
            found = paragraphs(markup)
            if found:
                book, chapter = key
                books.setdefault(book, {}).setdefault(chapter, []).extend(found)
    return sorted(books.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("module_dir", help="the module's folder (…/modules/comments/zcom/NAME)")
    parser.add_argument("verses", help="the `bible` program's listing of every KJV verse")
    parser.add_argument("train")
    parser.add_argument("heldout")
    parser.add_argument("--heldout-every", type=int, default=10)
    args = parser.parse_args()
    layout = chapter_layout(args.verses)
    first_chapter = [sum(len(chapters) for chapters in layout[:book]) for book in range(len(layout))]
    counts = {"train": 0, "heldout": 0, "books": 0, "words": 0}
    with (
        open(args.train, "w", encoding="utf-8") as train,
        open(args.heldout, "w", encoding="utf-8") as heldout,
    ):
        for index, (book, chapters) in enumerate(commentary_books(args.module_dir, layout)):
            counts["books"] += 1
            if index:  # a third blank line between books
                train.write("\n")
                heldout.write("\n")
            for chapter, found in sorted(chapters.items()):
                # chapter 0, the book's introduction, is no chapter of the Bible: trained on
                number = first_chapter[book] + chapter if chapter else None
                key = "heldout" if number and number % args.heldout_every == 0 else "train"
                (heldout if key == "heldout" else train).write("\n\n".join(found) + "\n\n\n")
                counts[key] += 1
                counts["words"] += sum(len(paragraph.split()) for paragraph in found)
    print(
        f"{counts['books']} books: {counts['train']} training chapters, "
        f"{counts['heldout']} held-out chapters, {counts['words']} words"
    )


if __name__ == "__main__":
    main()
