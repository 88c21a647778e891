"""The name of each tab of the app, in code and on screen."""

import enum


class TabKey(str, enum.Enum):
    """One member per tab: its key in code (the value) and its title on screen.

    Wherever a tab is named (the window's list of tabs, a request to show one, the
    links in a warning, the settings kept per tab), it is named by its `TabKey`; the
    value is what settings and `<a href>` links hold. A `TabKey` is a `str`, so a
    key that travelled through a Qt signal as text compares equal to its member.

    Example:

    >>> TabKey.MASKED_WORDS.title
    'Masked words'
    >>> f'<a href="{TabKey.FINE_TUNING}">'
    '<a href="fine-tuning">'
    """

    MASKED_WORDS = "masked-words"
    QUESTION_ANSWERING = "question-answering"
    CLASSIFY = "classify"
    FINE_TUNING = "fine-tuning"

    def __str__(self):
        # The value, also in f-strings (the enum's default would be "TabKey.CLASSIFY").
        return self.value

    @property
    def title(self):
        """The tab's title as the window shows it, e.g. "Classify & tag"."""
        return _TITLES[self]

    @property
    def link(self):
        """A rich-text link to the tab, "<a href="fine-tuning">Fine-tuning tab</a>": a
        label showing it passes the href on as a tab request."""
        return f'<a href="{self.value}">{self.title} tab</a>'

    @property
    def label(self):
        """The title for Qt texts that read "&" as a shortcut mark (tab and button
        texts, window titles): "Classify && tag"."""
        return self.title.replace("&", "&&")


_TITLES = {
    TabKey.MASKED_WORDS: "Masked words",
    TabKey.QUESTION_ANSWERING: "Question answering",
    TabKey.CLASSIFY: "Classify & tag",
    TabKey.FINE_TUNING: "Fine-tuning",
}
