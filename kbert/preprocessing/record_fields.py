"""The named fields a task reads from records, DataFrame columns and dataset columns."""

from dataclasses import dataclass


@dataclass(frozen=True)
class RecordFields:
    """Which names a task's examples carry when they come as records or columns.

    `kbert.preprocessing.data_forms` reads a list of per-example dicts, a pandas
    DataFrame or a Hugging Face `datasets.Dataset` through these names, so every task
    takes those forms the same way.

    Args:
        inputs: the canonical input fields, in order (e.g. `("text", "pair")`).
        optional: the input fields an example may leave out (e.g. `("pair",)`).
        aliases: other names accepted for an input field, as `((field, (name, ...)), ...)`
            (e.g. Hugging Face's CoNLL sets call the words "tokens").
        labels: the names the labels may go by, the first preferred; empty for tasks
            that learn without labels.
        text_lists: the input fields whose values are lists of strings (e.g. the words
            of an example); every other input field holds one string per example.

    Example:

    >>> fields = RecordFields(inputs=("text", "pair"), optional=("pair",), labels=("label",))
    >>> fields.names_of("text")
    ('text',)
    """

    inputs: tuple
    optional: tuple = ()
    aliases: tuple = ()
    labels: tuple = ()
    text_lists: tuple = ()

    def names_of(self, field):
        """The names `field` may go by, its canonical name first."""
        return (field,) + dict(self.aliases).get(field, ())

    def column_of(self, field, columns):
        """The first of `field`'s names in `columns`, or None."""
        return next((name for name in self.names_of(field) if name in columns), None)

    def label_column(self, columns):
        """The first label name in `columns`, or None."""
        return next((name for name in self.labels if name in columns), None)

    def describe(self):
        """The fields in words, for messages: "'text' (and optionally 'pair') and 'label'"."""
        required = [f"{field!r}" for field in self.inputs if field not in self.optional]
        words = " and ".join(required)
        if self.optional:
            words += " (and optionally " + ", ".join(f"{f!r}" for f in self.optional) + ")"
        if self.labels:
            words += f" with the labels under {self.labels[0]!r} (or passed as `y`)"
        return words
