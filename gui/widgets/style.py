"""The app's colours and the style sheets made of them, named for what they mark.

Every widget takes its colours from here, so that a colour means one thing throughout
the app (an error is the same red in a banner, a rejected row of data and a failed
probe) and changes in one place. Colours are "#rrggbb" strings ("#aarrggbb" where
translucent), which `QColor` and Qt's style sheets both take; the `*_STYLE` names are
style sheets for `setStyleSheet`. Nothing here imports Qt, so the tabs' format modules
(texts without widgets) use the same colours.
"""

import dataclasses

# --- Text -------------------------------------------------------------------------------

# Secondary text: hints, captions, notes, busy lines, the words of an empty view.
MUTED_TEXT = "#5f6b7a"
# Text on a coloured highlight (an answer, an entity, a probability bar).
INK = "#1a1a1a"


@dataclasses.dataclass(frozen=True)
class MessageColors:
    """The colours of an inline message: its text, its box's background and border."""

    text: str
    background: str
    border: str


# Something went wrong (banners, rejected rows of data, a failed probe, "No answer").
ERROR = MessageColors(text="#8a1c1c", background="#fdecea", border="#f5c2c0")
# It works, but not well (an untrained head, no head, a run that cannot be resumed).
WARNING = MessageColors(text="#6d4c00", background="#fff8e1", border="#ffe082")

# --- Highlights in text and tables -------------------------------------------------------

# A [MASK] in the masked-words editor.
MASK_BACKGROUND = "#dbe9fb"
MASK_TEXT = "#174ea6"
# Where the compared model differs: the mask's title, and rows it does not list.
DIFFERS_TEXT = "#9a5b00"
DIFFERS_BACKGROUND = "#fff1d6"
# The answer highlighted in a passage.
ANSWER_BACKGROUND = "#ffd54f"
ANSWER_UNDERLINE = "#b26a00"
# The tint of tokens where an answer likely starts and ends, over white paper.
START_PROBABILITY = "#1e88e5"
END_PROBABILITY = "#e53935"
PAPER = "#ffffff"
# One soft background per entity type (black text stays readable), in tag order.
ENTITY_COLORS = (
    "#ffd54f", "#81d4fa", "#a5d6a7", "#f48fb1", "#ce93d8",
    "#ffab91", "#80cbc4", "#e6ee9c", "#b0bec5", "#bcaaa4",
)
UNKNOWN_ENTITY = "#e0e0e0"
# One colour a category (the embedding map's labels): the first ten of the Tableau
# palette, as matplotlib's default.
CATEGORY_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)
# Token saliency: a word-piece that supports the explained label, and one that opposes it.
SUPPORTS_TARGET = "#2e7d32"
OPPOSES_TARGET = "#c2185b"
# The evaluation table's best epoch.
BEST_ROW_BACKGROUND = "#e6f4ea"

# --- Drawings -----------------------------------------------------------------------------

# A probability as a bar over a light track.
PROBABILITY_BAR = "#4a86e8"
PROBABILITY_TRACK = "#eef2f8"
# Attention: weight 1 in a heat map and the head view's lines; the token under the pointer.
ATTENTION = "#0b4f9c"
ATTENTION_FOCUS = "#e8710a"
# The frame around a heat map or a thumbnail.
MAP_BORDER = "#d0d7e2"
# Training curves: the loss (left axis) and the metric (right axis), the grid and axes.
LOSS_CURVE = "#1f77b4"
METRIC_CURVE = "#e8710a"
# Several runs' curves on one chart, one colour each, in the runs' order.
RUN_CURVES = (
    "#1f77b4", "#e8710a", "#2e7d32", "#c2185b", "#6a1b9a", "#00838f", "#8d6e63", "#546e7a",
)
CHART_GRID = "#1c000000"
CHART_AXIS = "#6e000000"


def rgb(color):
    """`(red, green, blue)` of a "#rrggbb" colour, for arithmetic on colours."""
    if len(color) != 7 or not color.startswith("#"):
        raise ValueError(f'`color` must be "#rrggbb". Received: color={color!r}')
    return tuple(int(color[index : index + 2], 16) for index in (1, 3, 5))


# --- Style sheets -------------------------------------------------------------------------


def text_style(color, italic=False, bold=False, padding=None):
    """A label's style sheet: its text `color`, optionally italic, bold, padded ("2px")."""
    parts = [f"color: {color};"]
    if italic:
        parts.append("font-style: italic;")
    if bold:
        parts.append("font-weight: bold;")
    if padding:
        parts.append(f"padding: {padding};")
    return " ".join(parts)


# An inline message box's padding around its text, in pixels: one line of text in a box
# about two lines of text high at most.
MESSAGE_PADDING = 4


def message_style(object_name, colors, right_padding=MESSAGE_PADDING):
    """The style sheet of an inline message box (`QLabel#object_name`) in `colors`;
    `right_padding` (pixels) keeps its text clear of a button in its right edge."""
    return (
        f"QLabel#{object_name} {{ color: {colors.text}; background: {colors.background};"
        f" border: 1px solid {colors.border}; border-radius: 4px; padding: {MESSAGE_PADDING}px;"
        f" padding-right: {right_padding}px; }}"
    )


HINT_STYLE = text_style(MUTED_TEXT)
NOTE_STYLE = text_style(MUTED_TEXT, padding="2px")
PLACEHOLDER_STYLE = text_style(MUTED_TEXT, padding="4px 2px")
BUSY_STYLE = text_style(MUTED_TEXT, italic=True)
WARNING_TEXT_STYLE = text_style(WARNING.text)
ERROR_TEXT_STYLE = text_style(ERROR.text)
# A group box whose title marks a difference.
DIFFERS_TITLE_STYLE = f"QGroupBox {{ {text_style(DIFFERS_TEXT, bold=True)} }}"
