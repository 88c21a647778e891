"""Removes repeated paragraphs from pretraining text files, and any held-out paragraph.

The files have the layout scripts/novels_corpus.py writes: paragraphs separated by one
blank line, chapters by two, documents by three. A training paragraph is dropped when
the same text (compared without case, punctuation or spacing) came earlier in any of
the training files or occurs in any held-out file, so that no held-out text is trained
on and nothing is trained on twice (commentaries repeat a quotation, editions repeat a
preface). Paragraphs of fewer than `--min-words` words are kept: short lines ("Verse
1.", "Selah.") repeat by nature. The layout is kept: when a paragraph goes, the widest
break around it stays, so a chapter or document still ends where it did.

Usage: python scripts/dedupe_corpus.py --heldout HELDOUT.txt ... -- TRAIN.txt ...
(each training file is rewritten in place; a summary line per file is printed)
"""

import argparse
import re

_BREAK = re.compile(r"(\n+)")
_NOT_A_WORD = re.compile(r"[\W_]+")


def key(paragraph):
    return _NOT_A_WORD.sub(" ", paragraph.lower()).strip()


def paragraphs(text):
    """(paragraph, number of newlines after it) in the order of `text`."""
    parts = _BREAK.split(text.lstrip("\n"))
    for index in range(0, len(parts), 2):
        if parts[index]:
            after = parts[index + 1] if index + 1 < len(parts) else ""
            yield parts[index], len(after)


def dedupe(text, seen, min_words):
    """`text` without the paragraphs whose keys are in `seen` (which grows); the count
    of paragraphs dropped."""
    kept, dropped = [], 0
    for paragraph, newlines in paragraphs(text):
        if len(paragraph.split()) >= min_words:
            paragraph_key = key(paragraph)
            if paragraph_key in seen:
                dropped += 1
                if kept:  # the widest of the breaks before and after it stays
                    kept[-1][1] = max(kept[-1][1], newlines)
                continue
            seen.add(paragraph_key)
        kept.append([paragraph, newlines])
    return "".join(paragraph + "\n" * max(newlines, 1) for paragraph, newlines in kept), dropped


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--heldout", nargs="*", default=[], help="held-out files (read only)")
    parser.add_argument("--min-words", type=int, default=8)
    parser.add_argument("train", nargs="+", help="training files, rewritten in place")
    args = parser.parse_args()
    seen = set()
    for path in args.heldout:
        with open(path, encoding="utf-8") as handle:
            for paragraph, _ in paragraphs(handle.read()):
                if len(paragraph.split()) >= args.min_words:
                    seen.add(key(paragraph))
    for path in args.train:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        deduped, dropped = dedupe(text, seen, args.min_words)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(deduped)
        print(f"{path}: {dropped} repeated or held-out paragraphs removed")


if __name__ == "__main__":
    main()
