"""Worker processes of a test: waited for under a timeout, and never left running; and
the one pass of the suite that runs tests whose processes choose their own backend."""

import keras
import pytest

# A test whose processes pick their own backend (or none) gives the same answer from any
# pass, so one pass runs it: PyTorch's, the shortest (scripts/test.sh runs the three
# passes side by side, so this evens out their lengths).
PROCESS_PASS_BACKEND = "torch"


def on_the_process_pass(reason):
    """Runs the test on the `PROCESS_PASS_BACKEND` pass only; `reason` says why one is
    enough (e.g. "starts JAX processes of its own")."""
    return pytest.mark.skipif(
        keras.config.backend() != PROCESS_PASS_BACKEND,
        reason=f"{reason}; the {PROCESS_PASS_BACKEND} pass runs it",
    )


def finished_outputs(processes, timeout):
    """`stdout` of each process once it has exited with status 0 (else the assertion shows
    its stderr); every process is killed if one fails or outlives `timeout` seconds."""
    outputs = []
    try:
        for process in processes:
            stdout, stderr = process.communicate(timeout=timeout)
            assert process.returncode == 0, stderr[-3000:]
            outputs.append(stdout)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()
    return outputs


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on (for a JAX coordinator)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_jax_worker(script, devices, process_id=None, port=None, processes=2):
    """`python -c script` on JAX with `devices` virtual CPU devices; with `port`, process
    `process_id` of a `processes`-process run whose coordinator is 127.0.0.1:port (the
    `KERAS_DISTRIBUTION_*` variables `keras.distribution.initialize` reads)."""
    import os
    import subprocess
    import sys

    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("KERAS_DISTRIBUTION")
    }
    environment.update(
        KERAS_BACKEND="jax",
        JAX_PLATFORMS="cpu",
        XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} "
        f"--xla_force_host_platform_device_count={devices}",
    )
    if port is not None:
        environment.update(
            KERAS_DISTRIBUTION_JOB_ADDRESSES=f"127.0.0.1:{port}",
            KERAS_DISTRIBUTION_NUM_PROCESSES=str(processes),
            KERAS_DISTRIBUTION_PROCESS_ID=str(process_id),
        )
    return subprocess.Popen(
        [sys.executable, "-c", script],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def result_lines(processes, timeout, prefix="RESULT"):
    """The JSON each process printed on its line starting with `prefix`."""
    import json

    return [
        json.loads(next(line for line in stdout.splitlines() if line.startswith(prefix))[len(prefix):])
        for stdout in finished_outputs(processes, timeout)
    ]
