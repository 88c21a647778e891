"""Novels as pretraining text, read from the R data of Debian's R packages.

`r-cran-janeaustenr` ships Jane Austen's six novels, and `r-cran-tokenizers` Herman
Melville's Moby-Dick (its `mobydick`, a Project Gutenberg edition), as R data (a
lazy-load database, `Rdata.rdb`/`.rdx`); this reads enough of R's XDR serialisation
format (R Internals, "Serialization formats": character vectors, lists, pairlists,
symbols) to get their lines without R. The title pages before the first chapter and
a Project Gutenberg licence after the last are left out.

Output layout, as `kbert create-pretraining-data --split-sentences --document-break 2`
reads it: one paragraph per line, paragraphs separated by one blank line, chapters
by two, novels by three. `--document-break 3` makes each novel a document (BERT's
next-sentence negatives then come from another novel, as Wikipedia's come from
another article); `--document-break 2` makes each chapter one. Every
`--heldout-every`-th chapter goes to the held-out file instead of the training file,
so held-out scores are on text never trained on.

Usage: python scripts/novels_corpus.py RDATA_BASE TRAIN.txt HELDOUT.txt [--heldout-every N]
"""

import argparse
import gzip
import re
import struct
import zlib

NILVALUE, SYMSXP, LISTSXP, CHARSXP, LGLSXP, INTSXP, REALSXP, STRSXP, VECSXP, REFSXP = (
    254,
    1,
    2,
    9,
    10,
    13,
    14,
    16,
    19,
    255,
)


class _Reader:
    def __init__(self, data):
        if data[:2] != b"X\n":
            raise ValueError("not an XDR-serialised R object")
        self.data, self.position, self.references = data, 2, []
        version = self.integer()
        self.integer(), self.integer()
        if version == 3:
            name_length = self.integer()  # then the native encoding's name
            self.position += name_length

    def integer(self):
        (value,) = struct.unpack_from(">i", self.data, self.position)
        self.position += 4
        return value

    def item(self):
        flags = self.integer()
        kind, has_attributes, has_tag = (
            flags & 0xFF,
            flags & (1 << 9),
            flags & (1 << 10),
        )
        if kind == NILVALUE:
            return None
        if kind == REFSXP:
            return self.references[(flags >> 8) - 1]
        if kind == SYMSXP:
            symbol = self.item()
            self.references.append(symbol)
            return symbol
        if kind == LISTSXP:
            if has_attributes:
                self.item()
            tag = self.item() if has_tag else None
            head = self.item()
            rest = self.item()
            return [(tag, head)] + (rest or [])
        if kind == CHARSXP:
            length = self.integer()
            if length == -1:
                return None
            text = self.data[self.position : self.position + length].decode(
                "utf-8", "replace"
            )
            self.position += length
            return text
        length = self.integer()
        if kind == STRSXP or kind == VECSXP:
            value = [self.item() for _ in range(length)]
        elif kind in (LGLSXP, INTSXP):
            value = list(struct.unpack_from(f">{length}i", self.data, self.position))
            self.position += 4 * length
        elif kind == REALSXP:
            value = list(struct.unpack_from(f">{length}d", self.data, self.position))
            self.position += 8 * length
        else:
            raise ValueError(f"R type {kind} is not supported")
        if has_attributes:
            attributes = dict(self.item())
            if attributes.get("names") is not None:
                return list(zip(attributes["names"], value))
        return value


def read_character_vectors(base):
    """{name: list of strings} for every character vector in `base`.rdb / `base`.rdx."""
    with gzip.open(f"{base}.rdx") as handle:
        index = dict(_Reader(handle.read()).item())
    result = {}
    with open(f"{base}.rdb", "rb") as handle:
        database = handle.read()
    for name, (offset, length) in index["variables"]:
        blob = database[int(offset) : int(offset) + int(length)]
        value = _Reader(zlib.decompress(blob[4:])).item()
        if isinstance(value, list) and all(
            isinstance(x, tuple) and isinstance(x[1], str) for x in value
        ):  # a named vector holding whole texts (tokenizers' `mobydick`): its lines
            value = [line for _, text in value for line in text.splitlines()]
        if isinstance(value, list) and all(
            isinstance(x, (str, type(None))) for x in value
        ):
            result[name] = value
    return result


_CHAPTER = re.compile(r"^(chapter\s+[0-9ivxlc]+\b|epilogue$)", re.IGNORECASE)
# A Project Gutenberg edition (tokenizers' `mobydick`) ends with the licence.
_END_OF_TEXT = re.compile(r"^(end of (the )?project gutenberg|\*\*\* ?end of)", re.IGNORECASE)


def chapters(lines):
    """Chapters as lists of paragraphs; the title pages before chapter 1 and a Project
    Gutenberg licence after the text are left out."""
    chapter, paragraph = None, []
    for line in lines + [""]:
        line = (line or "").strip()
        if _END_OF_TEXT.match(line):
            break
        if _CHAPTER.match(line):
            if chapter:
                yield chapter
            chapter, paragraph = [], []
        elif not line:
            if chapter is not None and paragraph:
                chapter.append(" ".join(paragraph))
            paragraph = []
        elif chapter is not None:
            paragraph.append(line.replace("_", ""))
    if chapter is not None and paragraph:
        chapter.append(" ".join(paragraph))
    if chapter:
        yield chapter


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rdata_base", help="path of Rdata.rdb without its extension")
    parser.add_argument("train")
    parser.add_argument("heldout")
    parser.add_argument("--heldout-every", type=int, default=10)
    args = parser.parse_args()
    counts = {"train": 0, "heldout": 0}
    with (
        open(args.train, "w", encoding="utf-8") as train,
        open(args.heldout, "w", encoding="utf-8") as heldout,
    ):
        number = 0
        for index, (name, lines) in enumerate(
            sorted(read_character_vectors(args.rdata_base).items())
        ):
            if index:  # a third blank line between novels
                train.write("\n")
                heldout.write("\n")
            for chapter in chapters(lines):
                number += 1
                target, key = (
                    (heldout, "heldout")
                    if number % args.heldout_every == 0
                    else (train, "train")
                )
                target.write("\n\n".join(chapter) + "\n\n\n")
                counts[key] += 1
    print(f"{counts['train']} training chapters, {counts['heldout']} held-out chapters")


if __name__ == "__main__":
    main()
