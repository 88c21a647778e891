"""The window's size, place and splitter positions, kept in QSettings across restarts."""

from PySide6.QtWidgets import QSplitter

GEOMETRY_KEY = "window/geometry"
STATE_KEY = "window/state"
SPLITTERS_GROUP = "splitters"


class WindowSettings:
    """Saves and restores a `QMainWindow`'s geometry, tool bar state and splitters.

    Every `QSplitter` inside each tab is kept under `splitters/<tab key>/<n>`, `n`
    counting the tab's splitters in Qt's child order (which is the order the tab
    builds them in, the same at every start). A saved state that no longer fits (a
    tab that lost a splitter) is ignored: Qt checks the state before applying it.

    Args:
        settings: the app's `QSettings`.
    """

    def __init__(self, settings):
        self._settings = settings

    def save(self, window, tabs):
        """Writes `window`'s geometry and the splitters of `tabs` ((key, widget) pairs)."""
        self._settings.setValue(GEOMETRY_KEY, window.saveGeometry())
        self._settings.setValue(STATE_KEY, window.saveState())
        for key, splitter in _splitters(tabs):
            self._settings.setValue(key, splitter.saveState())
        self._settings.sync()

    def restore(self, window, tabs):
        """Applies what `save` wrote, if anything; True if the geometry was restored."""
        geometry = self._settings.value(GEOMETRY_KEY)
        restored = geometry is not None and window.restoreGeometry(geometry)
        state = self._settings.value(STATE_KEY)
        if state is not None:
            window.restoreState(state)
        for key, splitter in _splitters(tabs):
            saved = self._settings.value(key)
            if saved is not None:
                splitter.restoreState(saved)
        return restored


def _splitters(tabs):
    for tab_key, widget in tabs:
        for index, splitter in enumerate(widget.findChildren(QSplitter)):
            yield f"{SPLITTERS_GROUP}/{tab_key}/{index}", splitter
