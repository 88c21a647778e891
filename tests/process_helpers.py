"""Worker processes of a test: waited for under a timeout, and never left running."""


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
