"""Whether a process id still names a running process (to tell abandoned files from live ones)."""

import os


def process_is_running(pid):
    """Whether the process `pid` exists on this machine (an exited, reaped one does not)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":
        return _windows_process_is_running(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # Exists, owned by another user.
    except (OSError, OverflowError):
        return False
    return True


def _windows_process_is_running(pid):
    # os.kill(pid, 0) would terminate the process on Windows; ask the kernel instead.
    import ctypes

    process_query_limited_information = 0x1000
    still_active = 259
    kernel32 = ctypes.windll.kernel32
    handle = kernel32.OpenProcess(process_query_limited_information, False, pid)
    if not handle:
        return False
    try:
        exit_code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(exit_code)):
            return True
        return exit_code.value == still_active
    finally:
        kernel32.CloseHandle(handle)
