"""The King James Bible as pretraining text, from the output of Debian's `bible` program.

Debian's `bible-kjv` (the program) and `bible-kjv-text` (its compressed text) print
verses as `Ge1:1 In the beginning God created the heaven and the earth.`; this turns
that listing into the layout `kbert create-pretraining-data --split-sentences
--document-break 3` reads, as scripts/novels_corpus.py does for the novels: one
chapter per line, chapters separated by two blank lines, books (the documents) by
three. Every `--heldout-every`-th chapter, counted through the whole Bible, goes to
the held-out file instead of the training file.

Usage: python scripts/kjv_corpus.py VERSES.txt TRAIN.txt HELDOUT.txt [--heldout-every N]
(VERSES.txt: `bible -p DATA_DIR -f "Gen1:1-Rev22:21"`, one verse per line)
"""

import argparse
import re

_VERSE = re.compile(r"^(?P<book>[1-3]?[A-Za-z]+)(?P<chapter>\d+):(?P<verse>\d+)\s+(?P<text>.*)$")


def books(lines):
    """(book abbreviation, [chapter text, ...]) in the order of the listing."""
    current, chapters, chapter_key = None, [], None
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        match = _VERSE.match(line)
        if match is None:
            raise ValueError(f"line {number} is not a verse: {line[:60]!r}")
        if match["book"] != current:
            if current is not None:
                yield current, chapters
            current, chapters, chapter_key = match["book"], [], None
        if match["chapter"] != chapter_key:
            chapters.append([])
            chapter_key = match["chapter"]
        chapters[-1].append(match["text"].strip())
    if current is not None:
        yield current, chapters


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verses", help="the `bible` program's listing of every verse")
    parser.add_argument("train")
    parser.add_argument("heldout")
    parser.add_argument("--heldout-every", type=int, default=10)
    args = parser.parse_args()
    counts = {"train": 0, "heldout": 0, "books": 0}
    with (
        open(args.verses, encoding="utf-8") as verses,
        open(args.train, "w", encoding="utf-8") as train,
        open(args.heldout, "w", encoding="utf-8") as heldout,
    ):
        number = 0
        for index, (_, chapters) in enumerate(books(verses)):
            counts["books"] += 1
            if index:  # a third blank line between books
                train.write("\n")
                heldout.write("\n")
            for chapter in chapters:
                number += 1
                key = "heldout" if number % args.heldout_every == 0 else "train"
                (heldout if key == "heldout" else train).write(" ".join(chapter) + "\n\n\n")
                counts[key] += 1
    print(
        f"{counts['books']} books: {counts['train']} training chapters, "
        f"{counts['heldout']} held-out chapters"
    )


if __name__ == "__main__":
    main()
