"""What each process is doing in the user's code, written where a watcher can read it.

The command line runs under a supervisor (``supervise.py``): a parent process that runs
no user code and so can report on the user's code whatever it does (exits, crashes,
hangs). To name the call that did it, every process that runs user code (the command's
process and each worker) keeps one small record, a *slot*: a 1 KiB file named by its
process id in the *watch directory*, mapped into memory. A slot says:

- whether the process is in the user's code now, and since when;
- which region of it: a label such as "your mechanism t.f on the first dataset of
  pair 0 ('--pair [1,1,1] [1,1]'), shard 1 of 4" (written once per region);
- the call index within the region and when that call began (written at every call:
  two stores into shared memory, a small fraction of a release's time; measured:
  docs/performance.md, "audits/engine/watch.py");
- how long the process has been in the user's code in all (the regions it left, summed, and
  when the outermost region it is in began): so that a progress line can tell the user's time
  from userdp's own (``SlotView.user_seconds``).

Without a watch directory (``audit()`` called from Python) the slot is a private buffer:
the same code runs, and nobody reads it. The watch directory travels in the environment
(``ENV``) to the command's process and as an argument to the worker processes.

Layout (native byte order, read and written by the same machine): int64 fields at byte
offsets 0 state (0 idle, 1 in user code), 8 call index (-1: the region as a whole), 16
calls in the region (0: one call), 24 region sequence number, 32 label length; float64
fields at 40 region start and 48 call start (``time.monotonic()``, which is one clock for
every process on the machine); int64 at 56 the region's first call index; float64 at 64
the seconds spent in the user's code in the outermost regions already left, and at 72 when the
outermost region the process is in began; the label's UTF-8 bytes from 80.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import shutil
import signal
import tempfile
import time

__all__ = [
    "ENV",
    "SLOT_BYTES",
    "Slot",
    "SlotView",
    "slot",
    "use",
    "directory",
    "region",
    "read_all",
    "read_slot",
    "configure",
    "settings",
    "exit_text",
    "make_directory",
    "DEFAULT_DEADLINE",
    "DEFAULT_TIMEOUT",
]

ENV = "USERDP_WATCH"
SLOT_BYTES = 1024
LABEL_AT = 80
LABEL_MAX = SLOT_BYTES - LABEL_AT
STATE, INDEX, CALLS, SEQ, LABEL_LEN, FIRST = 0, 1, 2, 3, 4, 7  # int64 fields
REGION_T, CALL_T, USER_S, OUTER_T = 5, 6, 8, 9  # float64 fields
DEFAULT_DEADLINE = 10.0  # seconds: a call running longer is reported as slow
DEFAULT_TIMEOUT = 600.0  # seconds: a call running longer is taken to hang and ended
_SETTINGS = "settings"


class Slot:
    """This process's record (see the module docstring); ``ints`` and ``floats`` are the
    int64 and float64 views the call loops write into directly."""

    def __init__(self, path: str | None):
        self.path = path
        if path is None:
            self._buf = bytearray(SLOT_BYTES)
        else:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                os.ftruncate(fd, SLOT_BYTES)
                self._buf = mmap.mmap(fd, SLOT_BYTES)
            finally:
                os.close(fd)
        view = memoryview(self._buf)
        self.ints, self.floats = view.cast("q"), view.cast("d")
        self._stack = []

    def enter(self, label: str, calls: int = 0) -> None:
        """Mark the start of a region of user code (nested regions restore the outer one)."""
        saved = self._save()
        self._stack.append(saved)
        if saved[0] == 0:  # the outermost region: the user's time runs from here
            self.floats[OUTER_T] = time.monotonic()
        self._write(label, calls)

    def leave(self) -> None:
        saved = self._stack.pop() if self._stack else None
        if saved is None or saved[0] == 0:
            self.ints[STATE] = 0  # first: a reader in between counts the region once, not twice
            self.floats[USER_S] += max(0.0, time.monotonic() - self.floats[OUTER_T])
            return
        _, label, calls, index = saved
        self._write(label, calls)
        self.ints[INDEX] = index

    def _save(self):
        return (self.ints[STATE], self.label(), self.ints[CALLS], self.ints[INDEX])

    def _write(self, label: str, calls: int) -> None:
        data = label.encode("utf-8", "replace")[:LABEL_MAX]
        self.ints[STATE] = 0  # a reader skips a half-written slot
        self._buf[LABEL_AT : LABEL_AT + len(data)] = data
        self.ints[LABEL_LEN] = len(data)
        self.ints[CALLS], self.ints[INDEX], self.ints[FIRST] = calls, -1, 0
        self.ints[SEQ] += 1
        now = time.monotonic()
        self.floats[REGION_T] = self.floats[CALL_T] = now
        self.ints[STATE] = 1

    def label(self) -> str:
        n = max(0, min(int(self.ints[LABEL_LEN]), LABEL_MAX))
        return bytes(self._buf[LABEL_AT : LABEL_AT + n]).decode("utf-8", "replace")


_DIR = None  # the watch directory this process writes into (None: private slot)
_SLOT: tuple | None = None  # (pid, Slot): a forked child makes its own


def make_directory(kind: str) -> str:
    """A new watch directory ``userdp-<kind>-<pid>-XXXX`` (in /dev/shm where there is one),
    after removing those whose owner process is gone (a supervisor killed with SIGKILL
    cannot remove its own)."""
    root = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    prefix = f"userdp-{kind}-"
    try:
        names = os.listdir(root)
    except OSError:
        names = []
    for name in names:
        owner = name[len(prefix) :].split("-")[0] if name.startswith(prefix) else ""
        if owner.isdigit() and not _pid_alive(int(owner)):
            path = os.path.join(root, name)
            try:
                if os.stat(path).st_uid == os.getuid():
                    shutil.rmtree(path, ignore_errors=True)
            except OSError:
                pass
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=root)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def use(path: str | None) -> None:
    """Write this process's slot into the watch directory ``path`` (None: a private one)."""
    global _DIR, _SLOT
    _DIR, _SLOT = path, None


def directory() -> str | None:
    """The watch directory in force: set by ``use`` or by the environment (``ENV``)."""
    if _DIR is not None:
        return _DIR
    d = os.environ.get(ENV)
    return d if d and os.path.isdir(d) else None


def slot() -> Slot:
    """This process's slot (created at its first use in each process)."""
    global _SLOT
    pid = os.getpid()
    if _SLOT is None or _SLOT[0] != pid:
        d = directory()
        try:
            s = Slot(None if d is None else os.path.join(d, str(pid)))
        except OSError:  # the directory went away: nobody is watching
            s = Slot(None)
        _SLOT = (pid, s)
    return _SLOT[1]


@contextlib.contextmanager
def region(label: str, calls: int = 0):
    """``with region("your factory t:make"):`` marks a region of user code in this process."""
    s = slot()
    s.enter(label, calls)
    try:
        yield s
    finally:
        s.leave()


# ------------------------------------------------------------------ the reading side
class SlotView:
    """A copy of one process's slot, read by the supervisor or by a worker pool's owner."""

    def __init__(self, pid: int, raw: bytes):
        view = memoryview(raw)
        ints, floats = view.cast("q"), view.cast("d")
        self.pid = pid
        self.busy = ints[STATE] == 1
        self.index, self.calls, self.seq = int(ints[INDEX]), int(ints[CALLS]), int(ints[SEQ])
        self.first = int(ints[FIRST])
        self.region_t, self.call_t = float(floats[REGION_T]), float(floats[CALL_T])
        self.user_s, self.outer_t = float(floats[USER_S]), float(floats[OUTER_T])
        n = max(0, min(int(ints[LABEL_LEN]), LABEL_MAX))
        self.label = bytes(raw[LABEL_AT : LABEL_AT + n]).decode("utf-8", "replace")

    def where(self) -> str:
        """The call, as a message names it: "<label>, call 17 of 5000" or "<label>"."""
        if self.index < 0:
            return self.label
        total = f" (of {self.calls})" if self.calls else ""
        return f"{self.label}, call {self.index}{total}"

    def user_seconds(self, now: float) -> float:
        """Seconds this process has spent in the user's code up to ``now`` (a ``time.monotonic()``),
        the region it is in included: the user's own time, which a progress line may blame on the
        user; the rest of a process's time is userdp's."""
        return self.user_s + (max(0.0, now - self.outer_t) if self.busy else 0.0)

    def seconds_per_call(self) -> float | None:
        """The region's mean time per finished call, or None before its first call returned."""
        done = self.index - self.first
        return (self.call_t - self.region_t) / done if self.index >= 0 and done > 0 else None


def read_slot(path: str, pid: int) -> SlotView | None:
    """The call record process ``pid`` last wrote to its slot file ``path`` (None if there is none
    or it cannot be read)."""
    try:
        with open(os.path.join(path, str(pid)), "rb") as f:
            raw = f.read(SLOT_BYTES)
    except OSError:
        return None
    return SlotView(pid, raw) if len(raw) == SLOT_BYTES else None


def read_all(path: str) -> list[SlotView]:
    """Every slot in the watch directory ``path``."""
    out = []
    try:
        names = os.listdir(path)
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            v = read_slot(path, int(name))
            if v is not None:
                out.append(v)
    return out


def configure(deadline: float, timeout: float) -> None:
    """Tell the supervisor the command's --deadline and --timeout (no-op when not watched)."""
    d = directory()
    if d is None:
        return
    tmp = os.path.join(d, f".{_SETTINGS}.{os.getpid()}")
    with open(tmp, "w") as f:
        f.write(f"{deadline!r} {timeout!r}\n")
    os.replace(tmp, os.path.join(d, _SETTINGS))


def settings(path: str) -> tuple[float, float]:
    """(deadline, timeout) written by ``configure``, or the defaults."""
    try:
        with open(os.path.join(path, _SETTINGS)) as f:
            a, b = f.read().split()
        return float(a), float(b)
    except (OSError, ValueError):
        return DEFAULT_DEADLINE, DEFAULT_TIMEOUT


_CRASH = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT"}


def exit_text(code: int | None) -> str:
    """How a process ended, from its exit code (negative: the signal), for a message."""
    if code is None:
        return "it ended (how is unknown)"
    if code >= 0:
        return (
            f"it exited with status {code} in the middle of the call, without a result (os._exit({code}) "
            "or an equivalent, in the code or a library it calls)"
        )
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    why = (
        " (a crash in native code)"
        if name in _CRASH
        else " (from outside, or by the out-of-memory killer)"
        if name == "SIGKILL"
        else ""
    )
    return f"it was killed by {name}{why}"
