"""Widgets and item-model pieces every tab shows alike: the error and warning banners,
an eliding label, a read-only table model, the tables' context menu, probability bars,
Qt text positions, and `style`, the app's named colours and style sheets.

Imports PySide6 and other modules of this package only; never a service, a tab or the
window. `style` imports nothing at all, so that the tabs' Qt-free format modules can
use its colours.
"""
