"""Reading token-tagged sentences in CoNLL format, and what the tags say about themselves.

A CoNLL file has one token per line with whitespace-separated columns (CoNLL-2003:
`word POS chunk NER`), sentences separated by blank lines, and `-DOCSTART-` lines between
documents. Tags are "O" or a position letter B, I, E or S, a "-" and an entity type.
"""

import logging
import re

import numpy as np

from kbert.data.examples import TokenClassificationExample
from kbert.data.problem_collector import ProblemCollector
from kbert.data.read_error import ReadError
from kbert.data.text_file import read_numbered_lines

__all__ = ["detect_tag_scheme", "label_names_from_tags", "read_conll"]

logger = logging.getLogger(__name__)

_TAG = re.compile(r"([BIES])-(\S+)")
_COLUMN_SEPARATOR = re.compile(r"[ \t]+")
_PREFIX_ORDER = {"B": 0, "I": 1, "E": 2, "S": 3}


def _tag_error(tag):
    """Why `tag` is not a tag, or None when it is one."""
    if tag == "O" or _TAG.fullmatch(tag):
        return None
    return f"malformed tag {tag!r} (expected 'O' or B-, I-, E-, S- followed by an entity type, e.g. 'B-PER')"


def read_conll(path, token_column=0, tag_column=-1, errors="raise"):
    """Reads sentences of tokens and tags from a CoNLL-format file.

    Columns are separated by spaces or tabs (not by other Unicode spaces, which may occur
    inside tokens). Blank lines end sentences; `-DOCSTART-` lines are skipped.

    Args:
        path: the file.
        token_column: 0-based column of the token; negative counts from the end.
        tag_column: 0-based column of the tag; the last column by default.
        errors: "raise" to stop at the first problem, or "collect" to read the whole file
            and return every problem with the sentences that have none.

    Returns:
        with `errors="raise"`, a list of `TokenClassificationExample(tokens, tags, line,
        token_lines)`, `line` being the line of the sentence's first token and
        `token_lines` each token's line; with "collect", a `ReadResult(examples,
        problems)`: the sentences without problems and a `ReadProblem(file, line,
        message)` for each bad line (a sentence with one is left out). A line too long
        or not UTF-8 is then the only problem, with no examples.

    Raises:
        ValueError: naming file and line, for a line with too few columns or a malformed tag,
            or longer than `kbert.data.text_file.MAX_LINE_BYTES` (the file is streamed); with
            "collect", only for an invalid `errors`.

    Examples:
    >>> sentences = read_conll("eng.train")
    >>> sentences[0].tokens, sentences[0].tags
    (['EU', 'rejects', 'German', 'call'], ['B-ORG', 'O', 'B-MISC', 'O'])
    >>> [problem.message for problem in read_conll("bad.conll", errors="collect").problems]
    ["bad.conll:3: malformed tag 'PER' (expected 'O' or B-, I-, E-, S- followed by an entity type, ...)."]
    """
    collector = ProblemCollector(path, errors)

    def read_examples():
        examples = []
        tokens, tags, lines, bad = [], [], [], False

        def finish_sentence():
            nonlocal tokens, tags, lines, bad
            if tokens and not bad:
                examples.append(TokenClassificationExample(tokens, tags, lines[0], tuple(lines)))
            tokens, tags, lines, bad = [], [], [], False

        for line, content in read_numbered_lines(path):
            content = content.strip(" \t")
            fields = _COLUMN_SEPARATOR.split(content) if content else None
            if not content or fields[0].startswith("-DOCSTART-"):
                finish_sentence()
                continue
            try:
                token, tag = _token_and_tag(path, line, content, fields, token_column, tag_column)
            except ReadError as error:
                collector.add(error)
                bad = True  # the sentence is left out, its other lines still checked
                continue
            tokens.append(token)
            tags.append(tag)
            lines.append(line)
        finish_sentence()
        logger.info("Read %d sentences from %s.", len(examples), path)
        return examples

    return collector.read(read_examples)


def _token_and_tag(path, line, content, fields, token_column, tag_column):
    """The token and the checked tag of one token line split into `fields`."""
    for name, column in (("token_column", token_column), ("tag_column", tag_column)):
        if not -len(fields) <= column < len(fields):
            raise ReadError.at(
                path, line, f"{name}={column} but the line has {len(fields)} columns: {content!r}"
            )
    problem = _tag_error(fields[tag_column])
    if problem:
        raise ReadError.at(path, line, f"{problem}.")
    return fields[token_column], fields[tag_column]


def _parsed_tags(tag_sequences):
    """All tags flattened with an "O" after each sequence, as prefix letters and entity types.

    Raises:
        ValueError: naming the sequence, position and tag of the first malformed tag.
    """
    sequences = [list(sequence) for sequence in tag_sequences]
    flat = np.array([tag for sequence in sequences for tag in sequence + ["O"]], dtype=str)
    distinct, tag_ids = np.unique(flat, return_inverse=True)
    for index, tag in enumerate(distinct.tolist()):
        problem = _tag_error(tag)
        if problem:
            position = int(np.argmax(tag_ids == index))
            ends = np.cumsum([len(sequence) + 1 for sequence in sequences])
            sequence_index = int(np.searchsorted(ends, position, side="right"))
            offset = position - (int(ends[sequence_index - 1]) if sequence_index else 0)
            raise ValueError(f"Sequence {sequence_index}, position {offset}: {problem}.")
    prefixes = np.array([tag[0] for tag in distinct.tolist()], dtype="<U1")[tag_ids]
    types = np.array([tag[2:] for tag in distinct.tolist()], dtype=str)[tag_ids]
    return prefixes, types


def detect_tag_scheme(tag_sequences):
    """The tagging scheme of gold tag sequences.

    Args:
        tag_sequences: list of tag sequences, one per sentence.

    Returns:
        "BIOES" when any E- or S- tag occurs; "IOB1" when entities start with I- (after "O"
        or another type) and B- appears only between adjacent entities of one type;
        otherwise "IOB2" (also called BIO: every entity starts with B-). Data that mixes
        IOB1 and IOB2 starts gives "IOB2" and a logged warning.

    Raises:
        ValueError: for a malformed tag, naming the sequence, position and tag.

    Examples:
    >>> detect_tag_scheme([["B-PER", "I-PER", "O"]]), detect_tag_scheme([["I-PER", "B-PER"]])
    ('IOB2', 'IOB1')
    """
    prefixes, types = _parsed_tags(tag_sequences)
    if np.isin(prefixes, ["E", "S"]).any():
        return "BIOES"
    previous_prefixes = np.concatenate([np.array(["O"]), prefixes[:-1]])
    previous_types = np.concatenate([np.array([""]), types[:-1]])
    after_other = (previous_prefixes == "O") | (previous_types != types)
    inside_starts = int(np.count_nonzero((prefixes == "I") & after_other))
    begin_starts = int(np.count_nonzero((prefixes == "B") & after_other))
    if inside_starts and not begin_starts:
        return "IOB1"
    if inside_starts:
        logger.warning(
            "%d entities start with I- and %d with B-: the tags mix IOB1 and IOB2; reading them as IOB2.",
            inside_starts,
            begin_starts,
        )
    return "IOB2"


def label_names_from_tags(tag_sequences):
    """A stable label list for a tagger: "O" first, then the tags grouped by entity type.

    Args:
        tag_sequences: list of tag sequences, one per sentence.

    Returns:
        list of tag strings: "O" (always), then for each entity type in sorted order its
        tags in B, I, E, S order, e.g. `["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]`.

    Raises:
        ValueError: for a malformed tag, naming the sequence, position and tag.

    Examples:
    >>> label_names_from_tags([["B-PER", "I-PER", "O", "B-LOC"]])
    ['O', 'B-LOC', 'B-PER', 'I-PER']
    """
    prefixes, types = _parsed_tags(tag_sequences)
    entity_tags = {(str(kind), str(prefix)) for prefix, kind in zip(prefixes, types) if prefix != "O"}
    ordered = sorted(entity_tags, key=lambda pair: (pair[0], _PREFIX_ORDER[pair[1]]))
    return ["O"] + [f"{prefix}-{kind}" for kind, prefix in ordered]
