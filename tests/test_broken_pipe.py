"""A reader of kbert's stdout that goes away (`kbert fill-mask ... --json | head -1`)
ends the command quietly: no error line, status 141 as the shell reports for coreutils.

The reading end of the pipe is closed before the command writes anything, so every
write (or the flush at exit) meets a broken pipe.
"""

import os
import subprocess
import sys

from kbert.commands import EXIT_BROKEN_PIPE
from process_helpers import on_the_process_pass

RUN_KBERT = "import sys; from kbert.cli import main; sys.exit(main())"

pytestmark = on_the_process_pass("the command runs in a process of its own")


def run_with_stdout_closed(*arguments):
    environment = dict(os.environ, KERAS_BACKEND="jax")
    process = subprocess.Popen(
        [sys.executable, "-c", RUN_KBERT, *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    process.stdout.close()
    try:
        _, stderr = process.communicate(timeout=300)
    finally:
        process.kill()
    return process.returncode, stderr.decode()


def test_fill_mask_into_a_closed_pipe_ends_quietly():
    status, stderr = run_with_stdout_closed(
        "fill-mask", "--model", "demo-tiny", "--json", "the [MASK] sat on the mat."
    )
    assert "Broken pipe" not in stderr and "Error" not in stderr, stderr
    assert status == EXIT_BROKEN_PIPE, stderr

