"""The app's window: `MainWindow` (menus, model bar, tabs, status bar), the window's
texts and settings, the Edit actions, the Export menu, the busy indicator and the Help
dialogs.

Imports `widgets`, `services` and `tab_key`; may import the tabs, which never import it.
"""
