"""The command line's supervisor: user code never decides userdp's fate.

``userdp audit``, ``userdp validate`` and ``userdp vectors check`` run other people's code.
Whatever that code does, the command must end with an honest exit status and message, in bounded time, leaving no
process behind. Some of what code can do cannot be caught in the process that runs it:
``os._exit(0)`` ends the process with status 0 (which reads "no violation found"), a
segfault ends it by a signal, a call that never returns never returns. So the command
runs in a child process and this process, which runs no user code, watches it:

- **the verdict is graded here** (``validate``): the child sends its findings (``deliver``) and
  this process, which never ran the target's code, recomputes the verdict from them, prints the
  report and chooses the exit status (``run``'s ``render``);
- **the exit status comes from the child's report, not its exit status.** The child writes its
  exit status into a pipe before it ends. A child that ends without a report (``os._exit``,
  a crash, a kill) is an error of the code it was running: exit 3, with a message naming
  the call it was in (its ``watch`` slot) and how it ended;
- **every line of stderr passes through here**, so progress is reported by time: after
  ``QUIET`` seconds without a line (the environment variable USERDP_PROGRESS_EVERY changes
  it), a line says what each process is doing (the function, the call, the seconds per
  call) when the user's code took at least half of those seconds (the slots' ``user_seconds``),
  else that the time was userdp's own, with the user's share: a call that merely happened to be
  running is not blamed for userdp's work;
- **a call slower than --deadline** (``watch.DEFAULT_DEADLINE``) is reported as slow, naming
  it; **a call that outlives --timeout** (``watch.DEFAULT_TIMEOUT``) is taken to hang: every
  process is ended and the command exits 3 naming the call;
- **SIGINT (Ctrl-C), SIGTERM and SIGHUP** end every process of the run at once (SIGKILL),
  including worker processes stuck in native code: exit 130, 143 and 129. The child and
  its workers ignore SIGINT, so a Ctrl-C from the terminal, which reaches the whole process
  group, is handled here alone. A second Ctrl-C finds nothing left to wait for;
- **no process is left behind.** This process is the "child subreaper" (Linux
  ``PR_SET_CHILD_SUBREAPER``) of everything the run starts, so a worker orphaned by its
  parent stays its descendant; when the child ends, every remaining descendant is killed
  and reaped. If this process itself is killed (SIGKILL), the child dies with it
  (``PR_SET_PDEATHSIG``), the fork server sees its pipe close and exits, and each worker
  dies with its parent in turn.

The child is forked at the start of the command, before any user module is imported; the
only threads it can inherit then are OpenBLAS's idle pool, which handles fork (its
``pthread_atfork`` handlers). ``audit()`` called from Python has no supervisor: its worker
processes are still ended on an error or Ctrl-C (``parallel.Sampler``).
"""

from __future__ import annotations

import errno
import json
import os
import select
import shutil
import signal
import sys
import time
import traceback

from userdp.audits.engine import watch
from userdp.audits.engine.parallel import prctl

__all__ = ["run", "available", "deliver", "QUIET", "EXIT_ERROR"]

EXIT_ERROR = 3
QUIET = 5.0  # seconds without a line on stderr before a progress line (USERDP_PROGRESS_EVERY)
TICK = 0.25  # seconds between looks at the child and the slots
KILL_WAIT = 2.0  # seconds to wait for killed processes to disappear
TRACKER_WAIT = 0.5  # seconds the resource tracker may take to clean up and exit
_SUBREAPER, _PDEATHSIG = 36, 1  # prctl options (linux/prctl.h)
_SIGNALS = {
    signal.SIGINT: "interrupted (Ctrl-C)",
    signal.SIGTERM: "terminated (SIGTERM)",
    signal.SIGHUP: "hung up (SIGHUP)",
}


_CHANNEL = None  # (pid, fd): in the supervised child, the pipe its result goes to (``deliver``)


class _Stop(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def available() -> bool:
    """Supervision needs fork and /proc (Linux); elsewhere the command runs unsupervised."""
    return hasattr(os, "fork") and os.path.isdir("/proc/self")


def deliver(payload: dict) -> bool:
    """In the supervised child: send ``payload`` (a JSON object: numbers, arrays, non-finite floats
    allowed) to the supervisor, whose ``render`` grades it, prints it and chooses the exit status
    (``run``); True. Anywhere else (no supervisor: ``main(argv)`` from Python): False, and the
    caller renders it itself."""
    if _CHANNEL is None or _CHANNEL[0] != os.getpid():
        return False
    data = json.dumps(payload, default=_plain, allow_nan=True, separators=(",", ":"))
    _write_all(_CHANNEL[1], data.encode("utf-8") + b"\n")
    return True


def _plain(obj):
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return obj.tolist()
    raise TypeError(f"not JSON: {type(obj).__name__}")


def run(argv: list[str], command, render=None) -> int:
    """``command(argv)`` in a supervised child process; returns the exit status to use. A result
    the child sent with ``deliver`` is graded and printed here by ``render(payload)`` (which
    returns the exit status), in this process, which ran none of the target's code: what the target
    did to the child's modules cannot set the verdict, the message or the exit status."""
    watch_dir = watch.make_directory("watch")
    os.environ[watch.ENV] = watch_dir
    res_r, res_w = os.pipe()
    err_r, err_w = os.pipe()
    prctl(_SUBREAPER, 1)
    me = os.getpid()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(argv, command, me, (res_r, res_w), (err_r, err_w))
    os.close(res_w)
    os.close(err_w)
    try:
        return _Supervisor(pid, watch_dir, res_r, err_r, argv[0] if argv else "", render).wait()
    finally:
        os.environ.pop(watch.ENV, None)
        shutil.rmtree(watch_dir, ignore_errors=True)
        for fd in (res_r, err_r):
            try:
                os.close(fd)
            except OSError:
                pass


def _child(argv, command, parent: int, res, err) -> None:
    global _CHANNEL
    code = EXIT_ERROR
    _CHANNEL = (os.getpid(), res[1])
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the supervisor's to handle
        for s in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        prctl(_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the supervisor ended before the call took
            os._exit(EXIT_ERROR)
        os.close(res[0])
        os.close(err[0])
        os.dup2(err[1], 2)  # stderr through the supervisor (progress by time)
        os.close(err[1])
        code = command(argv)
    except BaseException:  # never: the command catches everything
        try:
            traceback.print_exc()
        except BaseException:
            pass
        code = EXIT_ERROR
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        try:
            os.write(res[1], b"%d\n" % int(code))
        except BaseException:
            pass
        _close_multiprocessing()
        os._exit(int(code) if isinstance(code, int) and 0 <= code < 256 else EXIT_ERROR)


def _close_multiprocessing() -> None:
    """What ``multiprocessing`` does at a normal exit (its finalizers: the named semaphores of
    a fork server's pool are unlinked), which ``os._exit`` would skip. The report is sent
    already: nothing here can change the exit status."""
    if "multiprocessing" not in sys.modules:
        return
    try:
        from multiprocessing import util

        util._exit_function()
    except BaseException:
        pass


class _Supervisor:
    def __init__(self, pid: int, watch_dir: str, res_r: int, err_r: int, command: str, render=None):
        self.pid, self.dir, self.res_r, self.err_r, self.command = pid, watch_dir, res_r, err_r, command
        self.render = render
        self.t0 = time.monotonic()
        self.last_line = self.t0
        self.at_line_start = True
        self.report = b""
        self.status = None  # the child's wait status, once it ended
        self.slow = set()
        self.mark = (self.t0, 0.0)  # (when, the user's seconds then): the start of the quiet stretch
        try:
            self.quiet = float(os.environ.get("USERDP_PROGRESS_EVERY", QUIET))
        except ValueError:
            self.quiet = QUIET

    # -------------------------------------------------------------- the loop
    def wait(self) -> int:
        old = {s: signal.signal(s, self._on_signal) for s in _SIGNALS}
        try:
            try:
                hung = self._loop()
            except _Stop as stop:
                for s in _SIGNALS:
                    signal.signal(s, signal.SIG_IGN)  # a second Ctrl-C: already stopping
                self._kill_all()
                self._drain(0.1)
                self._say(f"userdp: {_SIGNALS[stop.signum]}: every process of this run was stopped")
                return 128 + stop.signum
            for s in _SIGNALS:
                signal.signal(s, signal.SIG_IGN)
            if hung is not None:
                deadline, timeout = watch.settings(self.dir)
                self._kill_all()
                self._drain(0.5)
                self._say(
                    f"userdp: error: your code did not return within --timeout {timeout:g} s: "
                    f"{self._slot_text(hung)} has run for {time.monotonic() - hung.call_t:.1f} s. It is "
                    "taken to hang, and every process of this run was stopped (raise --timeout if the "
                    "call is only slow)"
                )
                return EXIT_ERROR
            self._kill_all()  # whatever the run left behind
            self._drain(KILL_WAIT)
            return self._verdict()
        finally:
            for s, h in old.items():
                signal.signal(s, h)

    def _on_signal(self, signum, frame):
        raise _Stop(signum)

    def _loop(self):
        """Until the child ends (None) or a call outlives --timeout (its slot)."""
        open_fds = [self.err_r, self.res_r]
        while True:
            try:
                ready, _, _ = select.select(open_fds, [], [], TICK)
            except InterruptedError:
                ready = []
            for fd in ready:
                data = self._read(fd)
                if not data:
                    open_fds.remove(fd)
                elif fd == self.err_r:
                    self._forward(data)
                else:
                    self.report += data
            self._reap()
            if self.status is not None:
                return None
            hung = self._watch()
            if hung is not None:
                return hung

    def _read(self, fd: int) -> bytes:
        try:
            return os.read(fd, 65536)
        except OSError:
            return b""

    def _reap(self) -> None:
        """Reap every ended descendant (orphans come to a subreaper); note the child's status."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.pid:
                self.status = status

    # -------------------------------------------------------------- watching the slots
    def _watch(self):
        """Slow and hung calls, and a progress line when stderr has been quiet."""
        now = time.monotonic()
        deadline, timeout = watch.settings(self.dir)
        slots = watch.read_all(self.dir)
        busy = [v for v in slots if v.busy and _alive(v.pid)]
        theirs = sum(v.user_seconds(now) for v in slots)  # the user's time so far, every process
        if self.last_line > self.mark[0]:  # a line was printed: the quiet stretch starts again
            self.mark = (now, theirs)
        for v in busy:
            ran = now - v.call_t
            if ran > timeout:
                return v
            key = (v.pid, v.seq, v.index)
            if ran > deadline and key not in self.slow:
                self.slow.add(key)
                self._say(
                    f"userdp [{self._elapsed(now)}] slow: {self._slot_text(v)} has run for {ran:.1f} s "
                    f"(--deadline {deadline:g} s); it is ended as hung at --timeout {timeout:g} s"
                )
        if now - self.last_line >= self.quiet:
            self._progress(busy, now, now - self.mark[0], max(0.0, theirs - self.mark[1]))
        return None

    def _progress(self, busy, now: float, quiet: float, theirs: float) -> None:
        """The progress line after ``quiet`` seconds without one, in which the user's code ran
        ``theirs`` seconds (summed over processes; the slots' ``user_seconds``). It names the call
        the user's code is in only when that code took at least half of the stretch; otherwise the
        time was userdp's own (its checks between calls, or short calls of a fast target), and the
        line says so, with the user's share, rather than blame the call that happened to be running."""
        at = f"userdp [{self._elapsed(now)}] working"
        share = f"your code ran {theirs:.1f} s of the last {quiet:.1f} s"
        if theirs >= 0.5 * quiet and busy:
            for v in busy:
                self._say(f"{at}: {self._slot_text(v)}{_pace(v, now)} ({share})")
        elif theirs >= 0.5 * quiet:
            self._say(f"{at}: in your code, many short calls ({share})")
        elif theirs > 0.0:
            self._say(f"{at}: userdp's own work, not your code's ({share})")
        else:
            self._say(f"{at} (no message for {quiet:.0f} s)")

    def _slot_text(self, v) -> str:
        where = v.where()
        return where if v.pid == self.pid else f"{where} (in worker process {v.pid})"

    def _elapsed(self, now: float) -> str:
        t = now - self.t0
        return f"{t:.1f} s" if t < 60 else f"{t / 60:.1f} min"

    # -------------------------------------------------------------- stderr
    def _forward(self, data: bytes) -> None:
        _write_all(2, data)
        self.at_line_start = data.endswith(b"\n")
        self.last_line = time.monotonic()

    def _say(self, line: str) -> None:
        _write_all(2, (b"" if self.at_line_start else b"\n") + line.encode("utf-8", "replace") + b"\n")
        self.at_line_start = True
        self.last_line = time.monotonic()

    def _drain(self, seconds: float) -> None:
        """Forward what is left of the child's stderr (until every writer is gone)."""
        end = time.monotonic() + seconds
        fds = [self.err_r, self.res_r]
        while fds and time.monotonic() < end:
            try:
                ready, _, _ = select.select(fds, [], [], max(0.0, end - time.monotonic()))
            except InterruptedError:
                continue
            if not ready:
                break
            for fd in ready:
                data = self._read(fd)
                if not data:
                    fds.remove(fd)
                elif fd == self.err_r:
                    self._forward(data)
                else:
                    self.report += data

    # -------------------------------------------------------------- the end
    def _kill_all(self) -> None:
        """SIGKILL every descendant of this process, until none is left (or KILL_WAIT passed).
        ``multiprocessing``'s resource tracker is spared for up to TRACKER_WAIT seconds: once
        the others are gone it unlinks the semaphores they left and exits by itself."""
        start = time.monotonic()
        end = start + KILL_WAIT
        while True:
            pids = _descendants(os.getpid())
            if not pids:
                break
            spare = time.monotonic() - start < TRACKER_WAIT
            targets = [p for p in pids if not (spare and _is_tracker(p))]
            for pid in targets:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self._reap()
            if time.monotonic() > end:
                break
            time.sleep(0.01)
        self._reap()

    def _render(self, line: bytes) -> int:
        """The child's result (``deliver``) graded and printed by ``render``; its exit status."""
        try:
            payload = json.loads(line.decode("utf-8"))
            if not isinstance(payload, dict):
                raise ValueError(f"a result must be a JSON object, got {type(payload).__name__}")
            return self.render(payload)
        except Exception as exc:  # a result this process cannot read: not a verdict
            self._say(
                f"userdp: error: the result of the run could not be read ({type(exc).__name__}: {exc}); "
                "no verdict is given. If the target did not write to userdp's own file descriptors, this "
                "is a bug in userdp; please report it"
            )
            return EXIT_ERROR

    def _verdict(self) -> int:
        lines = self.report.split(b"\n")
        payloads = [line for line in lines if line.startswith(b"{")]
        text = b"\n".join(line for line in lines if not line.startswith(b"{")).decode("ascii", "replace").strip()
        if text.lstrip("-").isdigit():
            if payloads and self.render is not None:  # the child's result, graded here
                return self._render(payloads[-1])
            return int(text)
        # the child ended without its report: the code it ran ended it
        status = self.status
        code = (
            (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)) if status is not None else None
        )
        how = watch.exit_text(code)
        v = watch.read_slot(self.dir, self.pid)
        if v is not None and v.busy:
            self._say(f"userdp: error: your code ended the userdp process during {v.where()}: {how}")
        elif self.command == "validate":
            self._say(
                f"userdp: error: the userdp process ended while validating your implementation, in a "
                f"call that userdp does not record one by one: {how}. userdp itself never ends a "
                "process this way; run the target's calls alone to find which one does"
            )
        else:
            self._say(
                f"userdp: internal error: the userdp process ended outside your code: {how}. If nothing "
                "killed it from outside, this is a bug in userdp; please report it"
            )
        return EXIT_ERROR


def _pace(v, now: float) -> str:
    """ "; 1.02 s a call; this call 0.4 s so far" (the mean over the region's finished calls)."""
    per = v.seconds_per_call()
    this = (
        f"this call {max(0.0, now - v.call_t):.1f} s so far"
        if v.index >= 0
        else f"{max(0.0, now - v.region_t):.1f} s so far"
    )
    return f"; {per:.3g} s a call; {this}" if per is not None else f"; {this}"


def _write_all(fd: int, data: bytes) -> None:
    while data:
        try:
            n = os.write(fd, data)
        except InterruptedError:
            continue
        except OSError as exc:  # stderr closed: nothing to say it on
            if exc.errno in (errno.EPIPE, errno.EBADF):
                return
            raise
        data = data[n:]


def _is_tracker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"multiprocessing.resource_tracker" in f.read()
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rindex(b")") + 2 : data.rindex(b")") + 3] != b"Z"


def _descendants(root: int) -> list[int]:
    """Every process whose chain of parents reaches ``root`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
            ppid = int(data[data.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out
