"""Python string indices <-> Qt text positions."""

import bisect


class QtTextPositions:
    """Converts between code-point indices into `text` and Qt's UTF-16 positions.

    kbert's results carry Python string offsets (code points); a `QTextCursor` counts
    UTF-16 code units, in which a character outside the Basic Multilingual Plane (an
    emoji, say) takes two. Highlighting `text[start:end]` therefore needs
    `to_qt(start)`/`to_qt(end)`, and a Qt position maps back with `from_qt`. For text
    without such characters both are the identity and cost nothing.

    Args:
        text: the string the offsets point into (a passage as the model saw it).

    Examples:

    >>> positions = QtTextPositions("😀 cat")
    >>> positions.to_qt(2), positions.from_qt(3)
    (3, 2)
    """

    def __init__(self, text):
        self.text = text
        # Code-point indices of the characters that take two UTF-16 units.
        self._wide = [index for index, character in enumerate(text) if ord(character) > 0xFFFF]

    def to_qt(self, index):
        """The Qt position of code-point `index` (0 <= index <= len(text))."""
        return index + bisect.bisect_left(self._wide, index)

    def from_qt(self, position):
        """The code-point index at Qt `position`; one inside a surrogate pair rounds up."""
        low, high = 0, len(self.text)
        # The smallest index whose Qt position reaches `position`.
        while low < high:
            middle = (low + high) // 2
            if self.to_qt(middle) < position:
                low = middle + 1
            else:
                high = middle
        return low
