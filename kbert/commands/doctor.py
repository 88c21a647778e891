"""`kbert doctor`: what this install has (Python, Keras and its backends, the inference
engines, the extras, the cache), in a few aligned lines or as JSON.

Fast on purpose: packages are found without importing them (`importlib.util.find_spec`,
versions from their metadata); only the backend Keras runs on is imported, to list its
devices, and onnxruntime, to list its execution providers. No model is loaded.
"""

import json
import os
import platform
import re
import sys

from kbert.commands import EXIT_OK
from kbert.optional_packages import DISTRIBUTION

# The backends Keras runs on, in the order shown.
BACKENDS = ("jax", "tensorflow", "torch")
# A requirement of the package metadata: its distribution name, its extras, its marker.
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?[^;]*(?:;(.*))?$")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "doctor",
        help="say what this install has: backends, engines, extras, cache",
        description=(
            "Print Python and the platform, the versions of kbert and Keras, each backend "
            "(installed or not, which one Keras uses and its devices), each inference "
            "engine, each pip extra of kbert (installed or not, and the command that "
            "installs it) and the cache folder with its size. Loads no model."
        ),
        epilog="example: kbert doctor --json",
    )
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.set_defaults(run=run)


def run(args):
    report = install_report()
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(format_report(report))
    return EXIT_OK


# --- What the install has -----------------------------------------------------------------


def install_report():
    """The install as a JSON-ready dict: python, kbert, keras, backends, engines, extras, cache."""
    import kbert
    from kbert.optional_packages import configured_backend

    active = configured_backend()
    return {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "kbert": kbert.__version__,
        "keras": _version("keras"),
        "backends": {name: _backend(name, active) for name in BACKENDS},
        "active_backend": active,
        "engines": _engines(),
        "extras": _extras(),
        "cache": _cache(),
    }


def _version(distribution):
    """The installed version of `distribution`, or None."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _backend(name, active):
    from kbert.optional_packages import installed

    present = installed(name)
    backend = {"installed": present, "version": _version(name) if present else None,
               "active": name == active}
    if not present:
        backend["install"] = _pip_command(name if name != "jax" else None)
    elif name == active:
        backend["devices"] = _devices(name)
    return backend


def _devices(backend):
    """The devices of `backend` (imported here, as Keras would), or one line saying why not."""
    try:
        if backend == "jax":
            import jax

            return [f"{device.platform}:{device.id}" for device in jax.devices()]
        if backend == "torch":
            import torch

            return ["cpu"] + [f"cuda:{index} ({torch.cuda.get_device_name(index)})"
                              for index in range(torch.cuda.device_count())]
        import tensorflow as tf

        return [device.name for device in tf.config.list_logical_devices()]
    except Exception as error:  # a broken install is what this command is for
        return [f"unavailable: {type(error).__name__}: {error}"]


def _engines():
    from kbert.optional_packages import ONNX_EXPORT_MODULES
    from kbert.optional_packages import installed

    runtime = {"installed": installed("onnxruntime")}
    if runtime["installed"]:
        runtime["version"] = _version("onnxruntime")
        try:
            import onnxruntime

            runtime["providers"] = list(onnxruntime.get_available_providers())
        except Exception as error:  # a broken install is what this command is for
            runtime["providers"] = [f"unavailable: {type(error).__name__}: {error}"]
    else:
        runtime["install"] = _pip_command("onnx")
    missing = [module for module in ONNX_EXPORT_MODULES if not installed(module)]
    export = {"possible": not missing, "needs": list(ONNX_EXPORT_MODULES), "missing": missing}
    if missing:
        export["install"] = _pip_command("onnx")
    return {"keras": {"installed": True, "version": _version("keras")},
            "onnxruntime": runtime, "onnx_export": export}


def _pip_command(extra):
    from kbert.optional_packages import install_command

    return install_command(extra)


def _extras():
    """Each extra of kbert's package metadata: installed or not, what is missing, the command."""
    requirements = _extra_requirements()
    extras = {}
    for extra in requirements:
        missing = sorted(_missing(extra, requirements, set()))
        extras[extra] = {"installed": not missing, "missing": missing,
                         "install": _pip_command(extra)}
    return extras


def _extra_requirements():
    """extra -> [(distribution, its kbert extras when it is kbert itself)], from the metadata."""
    from importlib import metadata

    try:
        lines = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        lines = []
    requirements = {}
    for line in lines:
        match = _REQUIREMENT.match(line)
        marker = _EXTRA_MARKER.search(match.group(3) or "") if match else None
        if marker is None:
            continue
        nested = [name.strip() for name in (match.group(2) or "").split(",") if name.strip()]
        requirements.setdefault(marker.group(1), []).append((match.group(1), nested))
    return requirements


def _missing(extra, requirements, seen):
    """The distributions of `extra` (and the kbert extras it names) that are not installed."""
    missing = set()
    seen.add(extra)
    for distribution, nested in requirements.get(extra, []):
        if _normalized(distribution) == _normalized(DISTRIBUTION):
            for name in nested:
                if name not in seen:
                    missing |= _missing(name, requirements, seen)
        elif not _distribution_present(distribution):
            missing.add(distribution)
    return missing


def _normalized(distribution):
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _distribution_present(distribution):
    """Whether `distribution` is installed; for kbert's optional packages, whether its module
    is found too (what kbert itself asks before using one)."""
    from kbert.optional_packages import EXTRAS
    from kbert.optional_packages import installed

    for module in EXTRAS:
        if _normalized(module) == _normalized(distribution):
            return installed(module)
    return _version(distribution) is not None


def _cache():
    """The kbert cache folder (`$KBERT_CACHE`, else ~/.cache/kbert), whether it exists, its bytes."""
    from kbert.checkpoints.named_checkpoints import cache_root

    folder = cache_root()
    return {"path": str(folder), "exists": folder.is_dir(), "bytes": _folder_bytes(folder)}


def _folder_bytes(folder):
    """The bytes of the files below `folder`; links are not followed."""
    total, pending = 0, [folder]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total


# --- Printing -----------------------------------------------------------------------------


def format_report(report):
    """The report as aligned lines: a label column, then what it says."""
    rows = [("python", f"{report['python']} ({report['platform']}, {sys.executable})"),
            ("kbert", report["kbert"]), ("keras", _present(report["keras"]))]
    for name, backend in report["backends"].items():
        rows.append(("backend " + name, _backend_line(backend)))
    engines = report["engines"]
    rows.append(("engine keras", f"always ({_present(engines['keras']['version'])})"))
    runtime = engines["onnxruntime"]
    rows.append(("engine onnxruntime", (
        f"{runtime['version']} ({', '.join(runtime['providers'])})"
        if runtime["installed"] else f"not installed: {runtime['install']}")))
    export = engines["onnx_export"]
    rows.append(("onnx export", "possible" if export["possible"] else
                 f"not possible ({', '.join(export['missing'])} missing): {export['install']}"))
    for name, extra in report["extras"].items():
        rows.append(("extra " + name, "installed" if extra["installed"] else
                     f"missing {', '.join(extra['missing'])}: {extra['install']}"))
    cache = report["cache"]
    rows.append(("cache", f"{cache['path']} ({_size(cache['bytes'])})" if cache["exists"]
                 else f"{cache['path']} (not made yet)"))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label.ljust(width)}  {text}" for label, text in rows)


def _present(version):
    return version if version is not None else "not installed"


def _backend_line(backend):
    if not backend["installed"]:
        return f"not installed: {backend['install']}"
    if not backend["active"]:
        return backend["version"]
    return f"{backend['version']}, used by Keras, devices: {', '.join(backend['devices'])}"


def _size(count):
    if count < 1000:
        return f"{count} bytes"
    for unit in ("KB", "MB", "GB", "TB"):
        count /= 1000
        if count < 1000 or unit == "TB":
            return f"{count:.1f} {unit}"
