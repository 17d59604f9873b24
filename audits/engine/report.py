"""What the ``userdp`` command line prints: strict JSON, aligned tables, progress lines.

JSON (every ``--json`` output). One object with ``schema`` ("userdp.<what>/<version>")
and ``userdp_version`` first. JSON has no infinity or NaN, so every non-finite number is
written as ``null`` and listed in the top-level object ``nonfinite``, which maps the
value's JSON Pointer (RFC 6901, e.g. "/entries/3/true_epsilon") to "+inf", "-inf" or
"nan". A ``null`` that is not listed there means "not applicable" or "unknown". The
text is produced with ``allow_nan=False``: no ``Infinity``/``NaN`` tokens, ever.

Tables: columns sized to their longest cell (nothing is cut), numbers right-aligned
with 4 significant digits unless a column says otherwise.

Progress goes to stderr only (stdout stays clean for ``--json`` and pipes).

Stdout carries the result only (``command_output``). While ``userdp audit`` and ``userdp
validate`` run, file descriptor 1 points at stderr and ``sys.stdout`` is ``sys.stderr``, as
pytest captures output: whatever the user's code prints, from Python or from native code
or a subprocess, lands on stderr. The result is written, inside ``results()``, to the
saved original stdout. A reader that leaves early (``userdp audit ... | head -1``) makes
the rest of the result go nowhere, never the exit status: the verdict's status is
returned all the same (``SafeStream``), so ``set -o pipefail`` sees a violation.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import math
import os
import sys
import time
from importlib import metadata

import numpy as np

__all__ = ["version", "to_json", "fmt", "pct", "table", "Progress", "SafeStream", "command_output", "results"]


def version() -> str:
    """userdp's version, from the installed distribution's metadata."""
    try:
        return metadata.version("userdp")
    except metadata.PackageNotFoundError:
        return "unknown"


# ------------------------------------------------------------------ JSON
def _plain(x, pointer: str, nonfinite: dict):
    """x as JSON-ready Python data; non-finite floats -> None, recorded in ``nonfinite``."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        v = float(x)
        if math.isfinite(v):
            return v
        nonfinite[pointer] = "nan" if math.isnan(v) else ("+inf" if v > 0 else "-inf")
        return None
    if isinstance(x, dict):
        return {str(k): _plain(v, f"{pointer}/{_escape(str(k))}", nonfinite) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_plain(v, f"{pointer}/{i}", nonfinite) for i, v in enumerate(x)]
    if x is None or isinstance(x, str):
        return x
    raise TypeError(f"cannot encode {type(x).__name__} at {pointer or '/'} as JSON")


WITNESS_VALUES_MAX = 1000  # values a witness set lists in JSON; the rest are counted and digested


def capped_values(values: list, limit: int = WITNESS_VALUES_MAX) -> dict:
    """A witness set's values for JSON: ``{"values": the first ``limit``}`` when they fit, else also
    ``values_count`` (all of them), ``values_sha256`` (SHA-256 of the canonical JSON text of the
    whole list, ``json.dumps(values, separators=(",", ":"))``, so that two reports can be
    compared) and ``values_truncated``: true. A discrete audit of a near-continuous output
    once listed 99,901 values (a 6.1 MB report); the cap keeps a report below ~50 kB per set."""
    if len(values) <= limit:
        return {"values": values}
    text = json.dumps(_plain(values, "", {}), separators=(",", ":"))
    return {
        "values": values[:limit],
        "values_count": len(values),
        "values_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "values_truncated": True,
    }


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")  # RFC 6901, section 3


def to_json(schema: str, body: dict) -> str:
    """The document ``{"schema", "userdp_version", **body, "nonfinite"}`` as strict JSON."""
    nonfinite: dict = {}
    doc = {"schema": schema, "userdp_version": version(), **_plain(body, "", nonfinite)}
    doc["nonfinite"] = nonfinite
    return json.dumps(doc, indent=2, allow_nan=False)


# ------------------------------------------------------------------ tables
def fmt(x, digits: int = 4) -> str:
    """A cell: integers and whole floats in full, other floats to ``digits`` significant
    digits, inf as 'inf', None as '-'."""
    if x is None:
        return "-"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        v = float(x)
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if v == int(v) and abs(v) < 1e15:  # a whole number: all its digits
            return str(int(v))
        return f"{v:.{digits}g}"
    return str(x)


def pct(p: float) -> str:
    """0.95 -> '95%', 0.9975 -> '99.75%', 1 - 5e-6 -> '99.9995%'."""
    return f"{100 * p:.6g}%"


def table(rows: list[dict], columns: list[str] | None = None, *, formats: dict | None = None, indent: str = "") -> str:
    """Rows of dicts as an aligned text table; ``formats`` maps a column to a callable."""
    if not rows:
        return ""
    columns = columns or list(rows[0])
    formats = formats or {}
    cells = [[formats.get(c, fmt)(r.get(c)) for c in columns] for r in rows]
    numeric = [all(_is_number(r.get(c)) for r in rows) for c in columns]
    widths = [max(len(c), *(len(row[j]) for row in cells)) for j, c in enumerate(columns)]

    def line(values):
        return (
            indent + "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()
        )

    return "\n".join([line(columns)] + [line(row) for row in cells])


def _is_number(x) -> bool:
    return x is None or (isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool))


# ------------------------------------------------------------------ progress
class Progress:
    """One stderr line per step: steps done of the total, elapsed time and a linear estimate
    of the time left, e.g. ``[3/9, 41 s elapsed, ~1.5 min left] n = 600, rep 3``."""

    def __init__(self, label: str = "", stream=None):
        self.label, self.stream, self.t0 = label, stream or sys.stderr, time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def step(self, done: int, total: int, message: str = "") -> None:
        t = self.elapsed()
        left = f", ~{_duration(t / done * (total - done))} left" if 0 < done < total else ""
        head = f"{self.label} " if self.label else ""
        print(f"{head}[{done}/{total}, {_duration(t)} elapsed{left}] {message}".rstrip(), file=self.stream, flush=True)

    def note(self, message: str) -> None:
        """A message without a step count (e.g. the harness's own 'pilot 2/4: ...' lines)."""
        head = f"{self.label} " if self.label else ""
        print(f"{head}[{_duration(self.elapsed())}] {message}", file=self.stream, flush=True)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


# ------------------------------------------------------------------ stdout: the result only
class SafeStream(io.TextIOBase):
    """A text stream whose reader may leave: a write or flush to a closed pipe
    (BrokenPipeError, or EPIPE) marks it ``broken`` and sends it and every later write
    nowhere, instead of raising, so the command still returns its verdict's exit status."""

    def __init__(self, stream):
        self._s, self.broken = stream, False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self._s.write(text)
            except (BrokenPipeError, ValueError):
                self._leave()
            except OSError as exc:
                if exc.errno != errno.EPIPE:
                    raise
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._s.flush()
            except (BrokenPipeError, ValueError):
                self._leave()
            except OSError as exc:
                if exc.errno != errno.EPIPE:
                    raise
                self._leave()

    def _leave(self) -> None:
        self.broken = True
        try:  # nothing more for the departed reader, ever
            fd = self._s.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        try:
            return self._s.isatty()
        except (OSError, ValueError, AttributeError):
            return False

    @property
    def encoding(self):
        return getattr(self._s, "encoding", "utf-8")


_RESULTS = None  # the result stream while a command runs under command_output()


@contextlib.contextmanager
def command_output(isolate: bool):
    """Run a command with stdout for its result only (module docstring). ``isolate``: point fd 1
    and ``sys.stdout`` at stderr while it runs (the commands that run the user's code);
    otherwise only guard stdout against a reader that leaves."""
    global _RESULTS
    saved, saved_results = sys.stdout, _RESULTS
    fd_saved = None
    try:
        fd = saved.fileno()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        fd = None
    result = saved
    if isolate:
        try:
            saved.flush()
            fd_saved = os.dup(1)
            os.dup2(2, 1)  # native code and subprocesses: stderr
        except (OSError, ValueError):
            fd_saved = None
        if fd_saved is not None and fd == 1:  # the real stdout: write the result to its saved copy
            result = io.TextIOWrapper(
                io.FileIO(os.dup(fd_saved), "w"),
                encoding=getattr(saved, "encoding", None),
                errors=getattr(saved, "errors", None),
                line_buffering=getattr(saved, "line_buffering", False),
            )
    _RESULTS = SafeStream(result)
    sys.stdout = sys.stderr if isolate else _RESULTS
    try:
        yield _RESULTS
    finally:
        _RESULTS.flush()
        sys.stdout, _RESULTS = saved, saved_results
        if result is not saved:
            try:
                result.close()
            except OSError:
                pass
        if fd_saved is not None:
            os.dup2(fd_saved, 1)
            os.close(fd_saved)


@contextlib.contextmanager
def results():
    """``with results(): print(...)``: the block's ``print`` goes to the result stream."""
    if _RESULTS is None:
        yield sys.stdout
        return
    saved = sys.stdout
    sys.stdout = _RESULTS
    try:
        yield _RESULTS
    finally:
        _RESULTS.flush()
        sys.stdout = saved
