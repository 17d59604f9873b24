"""What the commands of ``userdp`` share: exit statuses, argument types, the watch options,
the checks of an output path, and the report of an error (``fail``).

Exit statuses (the docstring of ``audits/cli/main.py`` says when each is returned): ``EXIT_OK``
0, ``EXIT_FINDING`` 1, ``EXIT_USAGE`` 2, ``EXIT_ERROR`` 3.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import traceback

from userdp.audits.engine import watch
from userdp.audits.validation.protocol import DEFAULT_TIMEOUT as PROGRAM_TIMEOUT
from userdp.audits.cli.targets import UsageError

__all__ = [
    "EXIT_OK",
    "EXIT_FINDING",
    "EXIT_USAGE",
    "EXIT_ERROR",
    "int_at_least",
    "confidence_level",
    "selection_fraction_arg",
    "seconds",
    "watch_options",
    "check_plot_target",
    "check_writable",
    "start_checks",
    "PATH_OPTIONS",
    "fail",
]

EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
_DEBUG_HINT = "run again with --debug for the traceback"


# ------------------------------------------------------------------ argument parsing
def int_at_least(lo: int, what: str):
    """An argument type: an integer >= ``lo`` (``what`` names it in the error)."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo} ({what}), got {text!r}") from None
        if n < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo} ({what}), got {n}")
        return n

    return parse


def confidence_level(text: str) -> float:
    """An argument type: a confidence strictly between 0 and 1 (``--confidence``)."""
    try:
        c = float(text)
    except ValueError:
        c = float("nan")
    if not 0.0 < c < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number strictly between 0 and 1, got {text!r}")
    return c


def selection_fraction_arg(text: str) -> float:
    """An argument type: a share of the outputs in (0, 0.5] (``--selection-fraction``)."""
    try:
        f = float(text)
    except ValueError:
        f = float("nan")
    if not 0.0 < f <= 0.5:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 0.5], got {text!r}")
    return f


def seconds(text: str) -> float:
    """An argument type: a finite number of seconds > 0 (``--deadline``, ``--timeout``)."""
    try:
        s = float(text)
    except ValueError:
        s = float("nan")
    if not 0.0 < s < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return s


def watch_options(p: argparse.ArgumentParser) -> None:
    """--deadline and --timeout: what the supervisor does with a slow call (audits/cli/supervise.py)."""
    p.add_argument(
        "--deadline",
        type=seconds,
        default=watch.DEFAULT_DEADLINE,
        metavar="SECONDS",
        help="a call of your code running longer is reported as slow on stderr, naming it "
        f"(default {watch.DEFAULT_DEADLINE:g})",
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="a call of your code running longer is taken to hang: every process is ended and the "
        f"command exits 3, naming the call (default {watch.DEFAULT_TIMEOUT:g}; a batched call counts "
        "as one call; validate records only the calls of its audits); with --command, also the "
        f"program's time per response (default there {PROGRAM_TIMEOUT:g})",
    )


def check_plot_target(path: str) -> None:
    """Refuse --plot before any work: matplotlib missing, unknown format, or an unwritable path."""
    from userdp.audits.engine.plot import pyplot

    try:
        plt = pyplot()
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    ext = os.path.splitext(path)[1].lstrip(".").lower() or "png"
    fig = plt.figure()
    supported = fig.canvas.get_supported_filetypes()
    plt.close(fig)
    if ext not in supported:
        raise UsageError(f"--plot {path}: unknown format {ext!r}; use one of {sorted(supported)}")
    check_writable(path, "--plot")


def check_writable(path: str, option: str) -> None:
    """Refuse an output path before any work: a directory, a missing folder, or not writable."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{option} {path}: is a directory; give a file name")
    if not os.path.isdir(folder):
        raise UsageError(f"{option} {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError(f"{option} {path}: not writable")


PATH_OPTIONS = ("report", "transcript", "out", "index", "file", "plot")  # the options that name a path


def start_checks(args) -> None:
    """What the command line checks before any code of the target runs (a usage error, exit 2,
    naming the option): every path option (``PATH_OPTIONS``) made absolute, so that a target that
    changes the working directory (``os.chdir``) cannot move an output; ``--command`` not empty and
    split like a shell command line (an unbalanced quote is refused here); ``--transcript`` not a
    folder, in a folder that exists and is writable."""
    for name in PATH_OPTIONS:
        value = getattr(args, name, None)
        if value is None:
            continue
        flag = "--" + name
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f"{flag}: an empty path; give a file name")
        setattr(args, name, os.path.abspath(value))
    command = getattr(args, "program", None)
    if command is not None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(
                f"--command {command!r}: cannot be split like a shell command line ({exc}); quote each "
                "argument that holds spaces, and close every quote"
            ) from None
        if not argv:
            raise UsageError('--command: empty; give the program to run, e.g. --command "node my_impl.js"')
    transcript = getattr(args, "transcript", None)
    if transcript is not None:
        if os.path.isdir(transcript):
            raise UsageError(f"--transcript {transcript}: is a directory; give a file name")
        folder = os.path.dirname(transcript)
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK | os.X_OK):
            raise UsageError(f"--transcript {transcript}: the directory {folder} does not exist or is not writable")
        if os.path.exists(transcript) and not os.access(transcript, os.W_OK):
            raise UsageError(f"--transcript {transcript}: not writable")


def fail(args, exc: BaseException, message: str, code: int) -> int:
    """Report an error on stderr (its traceback with ``--debug``, else a hint for exit 3) and
    return its exit status ``code``."""
    if getattr(args, "debug", False):
        traceback.print_exception(exc)
    print(message, file=sys.stderr)
    if code == EXIT_ERROR and not getattr(args, "debug", False):
        print(f"({_DEBUG_HINT})", file=sys.stderr)
    return code
