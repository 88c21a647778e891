"""A tokenized corpus on disk, read back by random access through memory maps."""

import logging
import pathlib
import shutil
import tempfile

import numpy as np

logger = logging.getLogger("kbert.pretraining")

_TOKENS_FILE = "tokens.bin"
_SENTENCE_ENDS_FILE = "sentence_ends.bin"
_DOCUMENT_ENDS_FILE = "document_ends.bin"
# Sentences tokenized per call: large enough for the Rust tokenizer's threads,
# small enough that the batch is a few megabytes.
_SENTENCES_PER_BATCH = 4096


class TokenizedCorpus:
    """Every document's word-piece ids, stored in three flat files and memory-mapped.

    `tokens.bin` holds the ids of all sentences end to end (uint16 when the vocabulary
    has at most 65536 ids, else int32); `sentence_ends.bin` the cumulative end of each
    sentence in it and `document_ends.bin` the cumulative end of each document in
    sentences (int64). Reading document `i` touches only its own bytes, so
    `InstanceBuilder` can draw "random next" segments from any document of a corpus
    larger than memory, as the original recipe does, while the operating system pages
    the files in and out. Sentences that tokenize to nothing and documents without
    tokens are dropped.

    Build with `TokenizedCorpus.build`; use as a context manager (or call `close`) to
    delete the files of a corpus built in a temporary folder.

    Args:
        folder: a folder written by `build`.
        temporary: whether `close` deletes the folder.
    """

    def __init__(self, folder, temporary=False):
        self.folder = pathlib.Path(folder)
        self.temporary = temporary
        self._tokens = _map(self.folder / _TOKENS_FILE)
        self._sentence_ends = _map(self.folder / _SENTENCE_ENDS_FILE, np.int64)
        self._document_ends = _map(self.folder / _DOCUMENT_ENDS_FILE, np.int64)

    @classmethod
    def build(cls, documents, tokenizer, folder=None, progress=None):
        """Tokenizes `documents` into a new corpus, streaming.

        Args:
            documents: an iterable of documents, each a list of sentence strings
                (e.g. a `DocumentReader`). Read once.
            tokenizer: a `BertTokenizer`.
            folder: an empty or missing folder for the files; None uses a temporary
                folder that `close` deletes.
            progress: None, or a callable taking the number of documents just read.

        Returns:
            A `TokenizedCorpus`.
        """
        temporary = folder is None
        folder = pathlib.Path(tempfile.mkdtemp(prefix="kbert-corpus-") if temporary else folder)
        folder.mkdir(parents=True, exist_ok=True)
        dtype = np.uint16 if tokenizer.vocabulary_size <= 2**16 else np.int32
        try:
            with (
                open(folder / _TOKENS_FILE, "wb") as tokens_file,
                open(folder / _SENTENCE_ENDS_FILE, "wb") as sentence_file,
                open(folder / _DOCUMENT_ENDS_FILE, "wb") as document_file,
            ):
                writer = _CorpusWriter(tokenizer, dtype, tokens_file, sentence_file, document_file)
                for document in documents:
                    writer.add(document)
                    if progress is not None:
                        progress(1)
                writer.flush()
            if writer.num_documents == 0:
                raise ValueError("The input holds no text: every document is empty.")
            (folder / "dtype").write_text(np.dtype(dtype).name, encoding="utf-8")
            return cls(folder, temporary=temporary)
        except BaseException:
            if temporary:
                shutil.rmtree(folder, ignore_errors=True)
            raise

    def __len__(self):
        return len(self._document_ends)

    @property
    def num_sentences(self):
        return len(self._sentence_ends)

    @property
    def num_tokens(self):
        return len(self._tokens)

    def document(self, index):
        """Document `index` as `(token_ids, sentence_bounds)`.

        Returns:
            `token_ids`, an int32 array of the document's ids, and `sentence_bounds`,
            an int64 array of `n + 1` offsets into it: sentence `j` is
            `token_ids[sentence_bounds[j]:sentence_bounds[j + 1]]`.
        """
        first_sentence = self._document_ends[index - 1] if index > 0 else 0
        last_sentence = self._document_ends[index]
        ends = np.asarray(self._sentence_ends[first_sentence:last_sentence])
        start = self._sentence_ends[first_sentence - 1] if first_sentence > 0 else 0
        token_ids = np.asarray(self._tokens[start : ends[-1]], dtype=np.int32)
        return token_ids, np.concatenate([[0], ends - start])

    def close(self):
        """Releases the memory maps; deletes the files of a temporary corpus."""
        self._tokens = self._sentence_ends = self._document_ends = None
        if self.temporary:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __repr__(self):
        return (
            f"TokenizedCorpus({len(self)} documents, {self.num_sentences} sentences, "
            f"{self.num_tokens} tokens)"
        )


class _CorpusWriter:
    """Appends documents to the three files, tokenizing sentences in batches."""

    def __init__(self, tokenizer, dtype, tokens_file, sentence_file, document_file):
        self.tokenizer = tokenizer
        self.dtype = dtype
        self.files = (tokens_file, sentence_file, document_file)
        self.pending_sentences = []
        self.pending_documents = []  # sentence counts of the documents in the batch
        self.num_tokens = 0
        self.num_sentences = 0
        self.num_documents = 0

    def add(self, document):
        if isinstance(document, str) or not hasattr(document, "__iter__"):
            raise ValueError(
                "Each document must be a list of sentence strings. "
                f"Received: {type(document).__name__} {str(document)[:60]!r}"
            )
        sentences = list(document)
        self.pending_sentences.extend(sentences)
        self.pending_documents.append(len(sentences))
        if len(self.pending_sentences) >= _SENTENCES_PER_BATCH:
            self.flush()

    def flush(self):
        if not self.pending_sentences:
            self.pending_documents = []
            return
        tokens_file, sentence_file, document_file = self.files
        pieces = [part.token_ids for part in self.tokenizer.tokenize_texts(self.pending_sentences)]
        lengths = np.array([len(piece) for piece in pieces], dtype=np.int64)
        kept = lengths > 0
        if kept.any():
            tokens_file.write(np.concatenate(pieces).astype(self.dtype).tobytes())
        sentence_ends = self.num_tokens + np.cumsum(lengths[kept])
        sentence_file.write(sentence_ends.astype(np.int64).tobytes())
        self.num_tokens += int(lengths.sum())

        # Each document's sentence count, after dropping the empty sentences.
        owner = np.repeat(np.arange(len(self.pending_documents)), self.pending_documents)
        counts = np.bincount(owner[kept], minlength=len(self.pending_documents))
        document_ends = self.num_sentences + np.cumsum(counts[counts > 0])
        document_file.write(document_ends.astype(np.int64).tobytes())
        self.num_sentences += int(kept.sum())
        self.num_documents += int((counts > 0).sum())
        self.pending_sentences = []
        self.pending_documents = []


def _map(path, dtype=None):
    if dtype is None:
        dtype = np.dtype((path.parent / "dtype").read_text(encoding="utf-8").strip())
    if path.stat().st_size == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r")
