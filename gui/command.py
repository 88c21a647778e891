"""`kbert gui`: the desktop app as a subcommand of `kbert` (the same as `kbert-gui`).

The app adds it to the command line from above: its package metadata names
`add_parser` in the `kbert.commands` entry-point group, which `kbert.cli` reads, so
kbert itself never imports the app.
"""


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "gui",
        help="open the desktop app",
        description=(
            "Open kbert's desktop app: masked words predicted as you type, question "
            "answering with highlighted answers, classify & tag with a fine-tuned model, "
            "and point-and-click fine-tuning. It opens the bundled demo model unless "
            '--model names another. Needs PySide6: pip install "kbert-keras[gui]".'
        ),
        epilog="example: kbert gui --model runs/sst/model",
    )
    # The app's own options, declared once in the app; `kbert_gui.app` loads neither
    # PySide6 nor Keras.
    from kbert_gui.app import add_arguments

    add_arguments(parser)
    parser.set_defaults(run=run)


def run(args):
    from kbert_gui.app import run as run_app

    return run_app(args)
