"""`kbert gui`: the desktop app (the same as the `kbert-gui` command)."""


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "gui",
        help="open the desktop app",
        description=(
            "Open kbert's desktop app: the masked-word explorer, question answering with "
            "highlighted answers, and point-and-click fine-tuning. It opens the bundled "
            "demo model unless --model names another."
        ),
        epilog="example: kbert gui --model runs/sst/model",
    )
    # The app's own options, declared once in the app; `gui` is imported only to read
    # them (PySide6 loads, Keras does not).
    from kbert_gui.app import add_arguments

    add_arguments(parser)
    parser.set_defaults(run=run)


def run(args):
    from kbert_gui.app import run as run_app

    return run_app(args)
