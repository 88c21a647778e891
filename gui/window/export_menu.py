"""File ▸ Export: the current tab's exports, each saved where the user chooses."""


def fill_export_menu(menu, widget, export):
    """Fills `menu` with `widget`'s exports (`export_actions()`), each calling `export`;
    disabled entries for those that do not apply now, the menu disabled when none does."""
    menu.clear()
    exports = widget.export_actions() if hasattr(widget, "export_actions") else []
    for action_export in exports:
        action = menu.addAction(
            action_export.label, lambda action_export=action_export: export(action_export)
        )
        action.setEnabled(bool(action_export.available()))
    menu.setEnabled(any(action_export.available() for action_export in exports))


def export_to_chosen_file(window, export):
    """Asks where to save `export` (an `ExportAction`), starting in the last folder, and
    writes it; a failure shows in the window's banner. Returns the path, or None."""
    suggested = export.label.split(" as ")[0].rstrip("…").strip().lower().replace(" ", "-")
    chosen = window.context.file_dialogs.save_file(
        window, f"Export {export.label.rstrip('…')}", export.file_filter, "exports",
        suggested + export.suffix,
    )
    if chosen is None:
        return None
    path = export.path_for(chosen)
    try:
        export.write(path)
    except (OSError, ValueError) as error:
        window.error_banner.show_error(f"Could not save {path}: {error}")
        return None
    window.error_banner.clear_error()
    window.statusBar().showMessage(f"Saved {path}", 10000)
    return path
