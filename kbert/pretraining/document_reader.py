"""Streams documents (lists of sentences) from text files, one line at a time."""

import os
import pathlib
import re

from kbert.argument_checks import check_bool, check_integer
from kbert.files.bounded_reader import read_lines

# Titles and common abbreviations that end in a period without ending a sentence,
# compared without their period and case-insensitively.
ABBREVIATIONS = frozenset(
    """
    mr mrs ms messrs mme mlle dr prof rev hon st sr jr capt col gen lt sgt cpl maj adm
    gov pres sen rep fr mt ft no nos vol vols ch fig figs pp ed eds esq vs viz cf al
    approx dept est jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)

# A run of sentence-ending punctuation, the closing quotes or brackets after it, and
# the word before it (which may hold inner periods, as in "e.g" or "U.S").
_SENTENCE_END = re.compile(
    r"(?P<word>\S*?)(?P<end>[.!?\u2026]+)(?P<close>[\"'\u201d\u2019\u00bb)\]]*)(?=\s)"
)
_OPENING = "\"'\u201c\u2018\u00ab(["


def split_into_sentences(text):
    """Splits a paragraph into sentences with a few documented rules.

    A sentence ends after a run of `.`, `!`, `?` or `…`, with any closing quotes or
    brackets that follow, where whitespace comes next, except:

    - when the next word starts with a lower-case letter (`"Stop!" he cried.` is one
      sentence);
    - after a single `.` ending a known abbreviation (`Mr.`, `Mrs.`, `Dr.`, `St.`,
      `e.g.`, `No.`, ... see `ABBREVIATIONS`), a single letter (the initials of
      `J. R. R. Tolkien`), or a word with inner periods (`U.S.`).

    Whitespace runs, line breaks included, become single spaces. The rules miss some
    boundaries (a sentence ending in an abbreviation) and that is the price of never
    needing a trained model; text already split one sentence per line needs none of
    this.

    Args:
        text: a paragraph.

    Returns:
        A list of sentences, without surrounding whitespace.

    Examples:

    >>> split_into_sentences('Mr. Darcy bowed. "Indeed!" said she. It rained.')
    ['Mr. Darcy bowed.', '"Indeed!" said she.', 'It rained.']
    """
    text = " ".join(text.split())
    sentences = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        following = text[match.end() + 1 : match.end() + 2]
        if following.islower():
            continue
        if match["end"] == "." and not match["close"]:
            word = match["word"].lstrip(_OPENING)
            if word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isalpha()) or "." in word:
                continue
        sentences.append(text[start : match.end()].strip())
        start = match.end()
    if text[start:].strip():
        sentences.append(text[start:].strip())
    return sentences


class DocumentReader:
    """The documents of text files, read lazily: never a whole file in memory.

    Two layouts, as in google-research/bert:

    - one sentence per line (the default): consecutive non-blank lines are the
      sentences of a document;
    - plain paragraphs (`split_sentences=True`): the lines of a block are joined and
      split into sentences by `split_into_sentences`.

    Blocks are separated by blank lines (lines with only whitespace). A run of at
    least `document_break` blank lines ends a document, so with `document_break=2`
    single blank lines only separate paragraphs (the usual layout of books, with
    chapters set apart by several blank lines). The end of a file always ends a
    document. Documents without sentences are skipped.

    Iterating twice reads the files twice. Files must be UTF-8; a bad byte raises
    `ValueError` naming the file and line.

    Args:
        paths: a path or a list of paths.
        split_sentences: whether lines hold paragraphs rather than sentences.
        document_break: how many consecutive blank lines end a document.

    Examples:

    >>> for sentences in DocumentReader(["wiki.txt"]):
    ...     print(len(sentences))
    """

    def __init__(self, paths, split_sentences=False, document_break=1):
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        self.paths = [pathlib.Path(path) for path in paths]
        if not self.paths:
            raise ValueError("`paths` must name at least one file. Received: paths=[]")
        for path in self.paths:
            if not path.is_file():
                raise ValueError(f"Input file not found: {path}")
        check_bool("split_sentences", split_sentences)
        check_integer("document_break", document_break, 1)
        self.split_sentences = split_sentences
        self.document_break = document_break

    @property
    def total_bytes(self):
        """The size of all input files, for a progress estimate."""
        return sum(path.stat().st_size for path in self.paths)

    def __iter__(self):
        for path in self.paths:
            yield from self._documents(path)

    def _documents(self, path):
        sentences = []
        block = []
        blank_run = 0
        for line in _lines(path):
            if not line.strip():
                blank_run += 1
                if block:
                    sentences.extend(self._sentences(block))
                    block = []
                if blank_run >= self.document_break and sentences:
                    yield sentences
                    sentences = []
                continue
            blank_run = 0
            block.append(line)
        if block:
            sentences.extend(self._sentences(block))
        if sentences:
            yield sentences

    def _sentences(self, block):
        if self.split_sentences:
            return split_into_sentences(" ".join(block))
        return [line.strip() for line in block]

    def __repr__(self):
        return (
            f"DocumentReader({len(self.paths)} file(s), split_sentences={self.split_sentences}, "
            f"document_break={self.document_break})"
        )


def _lines(path):
    """The lines of a UTF-8 file, streamed through the bounded reader, without endings.

    A line longer than `kbert.files.bounded_reader.MAX_LINE_BYTES` is an error naming
    the file and line.
    """
    for _, line, _ in read_lines(path):
        yield line
