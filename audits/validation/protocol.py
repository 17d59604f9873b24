"""The process protocol: validate or audit a program written in any language.

userdp starts the program (``ProcessTarget(command)``) and speaks JSON lines with it: one
request per line on the program's stdin, one response per line on its stdout, in order, each
response repeating its request's ``id``. The schema is ``schema/userdp-protocol-1.json`` (JSON
Schema 2020-12, shipped with the package; ``load_schema``); ``docs/protocol.md`` documents it
with a worked exchange. Three requests:

- hello (once per process, id 0): the algorithm userdp will ask about. The program answers
  with the noise-free stages it computes and whether it draws releases.
- release: ``dataset``, ``params``, a ``seed`` and a ``size``: ``size`` independent releases of
  the randomized mechanism, drawn from that seed only.
- stages: ``dataset`` (or null), ``params`` and the names of noise-free ``stages`` (weights,
  statistic, sensitivity, noise_scale, ...): their values.

A request the program cannot answer gets an error response, ``{"id": k, "error": {"kind":
"refused" | "failed", "message": ...}}``. To userdp it is the exception a Python implementation
would raise: "refused" is ``ProgramRefused`` (a ``ValueError``: bad input, refused), "failed" is
``ProgramFailed`` (a ``RuntimeError``). So ``validate`` grades it exactly as it grades a Python
exception: a refusal where the reference refuses too, an error of the target elsewhere.

The rest of userdp sees plain Python callables. ``ProcessTarget.mechanism(dataset, rng, size,
**params)`` is a batched mechanism (the seed of each request is drawn from ``rng``), and
``stage(name)`` returns a stage callable ``f(dataset, **params)`` (``f(**params)`` for a stage
that takes no dataset); ``adapter(type)`` wraps them in a ``properties.adapter.Adapter``. So
``userdp validate`` and ``userdp audit`` need nothing new beyond building the target.

Batching and deadlines. A mechanism call of ``size`` releases is cut into requests of at most
``batch`` releases, all written at once and answered in turn: the program computes request k+1
while userdp decodes response k, so the protocol's cost overlaps the program's own work
(``userdp bench``, row ``protocol.overhead``). Every response must arrive within ``timeout``
seconds of the previous one (of the request, for the first), and the hello within
``start_timeout`` seconds of the start.

Hostile programs. A program that crashes, exits early, hangs past its deadline, prints a line
that is not JSON, breaks the schema, answers another request's id or the wrong number of
releases is killed, with its whole process group, and reported as ``TargetError``, which names
the command, the request and the last lines of the program's stderr. ``TargetError`` derives
from ``BaseException``, not ``Exception``, on purpose: code that grades an exception as a
finding (validate's "any exception on an excluded input is a refusal", Hypothesis's "an
exception is a counterexample") catches ``Exception``, and a broken program must never become a
verdict. The command line turns it into exit status 3 (``audits/cli/program.py``).

The program is started lazily, once per process: a ``ProcessTarget`` that is pickled or forked
into a worker starts its own copy there. ``close()`` (or the ``with`` block, or the end of the
interpreter) ends it: stdin is closed, then the process group is killed after ``GRACE`` seconds.
"""

from __future__ import annotations

import atexit
import binascii
import json
import math
import numbers
import os
import re
import selectors
import shlex
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Sequence

import numpy as np

from userdp.audits.validation.protocol_values import concat, decode_value, masked, show, tuples, unreadable

__all__ = [
    "PROTOCOL",
    "SCHEMA_FILE",
    "SEED_LIMIT",
    "MAX_SIZE",
    "DEFAULT_BATCH",
    "DEFAULT_TIMEOUT",
    "DEFAULT_START_TIMEOUT",
    "TargetError",
    "CommandError",
    "TranscriptError",
    "ProgramRefused",
    "ProgramFailed",
    "SchemaViolation",
    "load_schema",
    "check_message",
    "encode_dataset",
    "decode_dataset",
    "encode_params",
    "decode_value",
    "ProcessTarget",
]

PROTOCOL = 1
SCHEMA_FILE = "schema/userdp-protocol-1.json"  # package data of userdp.audits.validation
SEED_LIMIT = 2**53  # seeds are integers in [0, 2^53): exact in every language's JSON double
MAX_SIZE = 1_000_000  # releases per request (the schema's maximum)
DEFAULT_BATCH = 10_000  # releases per request when a call asks for more
DEFAULT_TIMEOUT = 60.0  # seconds per response
DEFAULT_START_TIMEOUT = 30.0  # seconds from the start to the hello response (a JVM or a compile step)
GRACE = 2.0  # seconds a program has to exit after its stdin closes, before the kill
MAX_LINE = 1 << 28  # bytes: a longer response line is an error (a program that never ends a line)
STDERR_TAIL = 1500  # bytes of the program's stderr quoted in an error
_READ = 1 << 20  # bytes per read, into a buffer allocated once per process
_PIPE_SIZE = 1 << 20  # the pipes' capacity where Linux lets us set it (F_SETPIPE_SZ)


# ------------------------------------------------------------------ errors
class TargetError(BaseException):
    """The program broke the protocol: it crashed, exited, hung, or wrote something that is not
    a response to the request. Never a verdict (module docstring: why a ``BaseException``).

    ``command`` is the program's command line, ``request`` a one-line summary of the request
    it was answering (or None), ``reason`` what went wrong, ``stderr`` the end of its stderr."""

    userdp_passthrough = True  # engine/parallel.py PASSTHROUGH: the sampler lets it leave as it is

    def __init__(self, command: str, reason: str, request: str | None = None, stderr: str = ""):
        self.command, self.reason, self.request, self.stderr = command, reason, request, stderr
        text = f"target program `{command}` {reason}"
        if request:
            text += f" (request: {request})"
        if stderr.strip():
            text += "; its stderr ended with:\n" + "\n".join("  | " + s for s in stderr.rstrip().splitlines()[-12:])
        super().__init__(text)


class CommandError(TargetError):
    """The command could not be started (not found, not executable): the command line's fault."""


class TranscriptError(CommandError):
    """The transcript file cannot be written (a full device, a folder): the command line's fault."""

    def __init__(self, path: str, exc: OSError):
        BaseException.__init__(self, f"--transcript {path}: cannot write it: {exc.strerror or exc}")
        self.command, self.reason, self.request, self.stderr = "", str(exc), None, ""


class ProgramRefused(ValueError):
    """The program's error response of kind "refused": the input is outside its domain."""


class ProgramFailed(RuntimeError):
    """The program's error response of kind "failed": it could not compute the answer."""


class SchemaViolation(ValueError):
    """A message that breaks the protocol's schema; the message names the JSON path."""


# ------------------------------------------------------------------ the schema
@lru_cache(maxsize=1)
def load_schema() -> dict:
    """The protocol's JSON Schema (``SCHEMA_FILE``, package data), parsed."""
    return json.loads(resources.files("userdp.audits.validation").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


_TYPES = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer()),
}


def check_message(message, definition: str) -> None:
    """Raise ``SchemaViolation`` unless ``message`` (parsed JSON) satisfies ``$defs/definition``
    of the protocol's schema (e.g. "release_response", "dataset", "release").

    The checker implements the keywords the schema uses (type, const, enum, properties,
    required, additionalProperties, items, minItems, uniqueItems, minimum, maximum,
    exclusiveMinimum, minLength, anyOf, oneOf, $ref); tests/audits/test_protocol.py checks
    it against the ``jsonschema`` library."""
    if not isinstance(definition, str):
        raise TypeError(f"definition must be the name of a schema definition (str), got {type(definition).__name__}")
    root = load_schema()
    if definition not in root["$defs"]:
        raise ValueError(f"definition must be one of the schema's $defs {sorted(root['$defs'])}, got {definition!r}")
    why = _violation(message, root["$defs"][definition], root, "")
    if why is not None:
        raise SchemaViolation(f"breaks the protocol schema ({definition}): {why}")


def _violation(x, s: dict, root: dict, path: str) -> str | None:
    """None if ``x`` satisfies schema ``s``, else the first reason, with its JSON pointer."""
    where = path or "/"
    if "$ref" in s:
        why = _violation(x, root["$defs"][s["$ref"].rsplit("/", 1)[-1]], root, path)
        if why is not None:
            return why
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(_TYPES[t](x) for t in types):
            return f"{where}: expected {' or '.join(types)}, got {show(x)}"
    if "const" in s and not (x == s["const"] and type(x) is type(s["const"])):
        return f"{where}: must be {json.dumps(s['const'])}, got {show(x)}"
    if "enum" in s and x not in s["enum"]:
        return f"{where}: must be one of {s['enum']}, got {show(x)}"
    if _TYPES["number"](x):
        if "minimum" in s and x < s["minimum"]:
            return f"{where}: must be >= {s['minimum']}, got {x!r}"
        if "maximum" in s and x > s["maximum"]:
            return f"{where}: must be <= {s['maximum']}, got {x!r}"
        if "exclusiveMinimum" in s and not x > s["exclusiveMinimum"]:
            return f"{where}: must be > {s['exclusiveMinimum']}, got {x!r}"
    if isinstance(x, str) and len(x) < s.get("minLength", 0):
        return f"{where}: must have at least {s['minLength']} character(s)"
    if isinstance(x, list):
        if len(x) < s.get("minItems", 0):
            return f"{where}: must have at least {s['minItems']} item(s), got {len(x)}"
        if s.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in x}) < len(x):
            return f"{where}: items must be distinct"
        if "items" in s:
            for j, v in enumerate(x):
                why = _violation(v, s["items"], root, f"{path}/{j}")
                if why is not None:
                    return why
    if isinstance(x, dict):
        for k in s.get("required", ()):
            if k not in x:
                return f"{where}: missing {k!r}"
        props = s.get("properties", {})
        extra = s.get("additionalProperties", True)
        for k, v in x.items():
            if k in props:
                why = _violation(v, props[k], root, f"{path}/{k}")
            elif extra is False:
                why = f"{where}: unexpected key {k!r} (allowed: {', '.join(props)})"
            elif isinstance(extra, dict):
                why = _violation(v, extra, root, f"{path}/{k}")
            else:
                why = None
            if why is not None:
                return why
    if "anyOf" in s:
        whys = [_violation(x, sub, root, path) for sub in s["anyOf"]]
        if all(w is not None for w in whys):
            return min(whys, key=len) if len(whys) == 1 else f"{where}: matches none of the allowed forms ({whys[0]})"
    if "oneOf" in s:
        whys = [_violation(x, sub, root, path) for sub in s["oneOf"]]
        ok = sum(w is None for w in whys)
        if ok != 1:
            return (
                f"{where}: matches none of the allowed forms ({whys[0]})"
                if ok == 0
                else f"{where}: matches more than one form"
            )
    return None


# ------------------------------------------------------------------ encoding
_FIELDS = ("values", "user_ids", "labels", "epsilons", "task_ids", "partition_ids")


def encode_dataset(dataset) -> dict:
    """A ``UserDataset`` (or ``data.EMPTY``) as the protocol's dataset object: its fields as
    JSON arrays (absent optional fields left out). Floats keep every bit (shortest repr)."""
    from userdp.reference.data import EmptyDataset, UserDataset

    if isinstance(dataset, EmptyDataset):
        return {"values": [], "user_ids": []}
    if not isinstance(dataset, UserDataset):
        raise TypeError(
            f"dataset must be a userdp UserDataset (or data.EMPTY) to be sent to a program, "
            f"got {type(dataset).__name__}"
        )
    return {k: getattr(dataset, k).tolist() for k in _FIELDS if getattr(dataset, k) is not None}


def decode_dataset(obj) -> Any:
    """The protocol's dataset object as a ``UserDataset`` (``data.EMPTY`` for empty arrays);
    a bad object raises ``ValueError`` naming the field (``SchemaViolation`` for its form)."""
    from userdp.reference.data import EMPTY, UserDataset

    check_message(obj, "dataset")
    if len(obj["values"]) == 0 and len(obj["user_ids"]) == 0 and len(obj) == 2:
        return EMPTY
    try:
        return UserDataset(**{k: np.asarray(v) for k, v in obj.items()})
    except (ValueError, TypeError) as exc:
        raise ValueError(f"obj is not a dataset: {exc}") from None


def encode_params(params: Mapping) -> dict:
    """The parameters as the protocol's params object: numbers, strings, booleans, null and
    (nested) arrays; numpy arrays and scalars become lists and numbers; a number that is not
    finite becomes ``{"nonfinite": "inf" | "-inf" | "nan"}``. Anything else raises TypeError."""
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping of parameter names to values, got {type(params).__name__}")
    out = {}
    for k, v in params.items():
        if not isinstance(k, str):
            raise TypeError(f"params: parameter names must be str, got {type(k).__name__} {k!r}")
        out[k] = _param(v, k)
    return out


def _param(v, name: str):
    if v is None or isinstance(v, (bool, np.bool_, str)):
        return bool(v) if isinstance(v, np.bool_) else v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        f = float(v)
        if math.isfinite(f):
            return f
        return {"nonfinite": "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")}
    if isinstance(v, np.ndarray):
        if v.dtype.kind not in "biuf":
            raise TypeError(f"params: {name} is an array of dtype {v.dtype}; only numbers can be sent to a program")
        return [_param(x, name) for x in v.tolist()] if v.ndim else _param(v.item(), name)
    if isinstance(v, (list, tuple)):
        return [_param(x, name) for x in v]
    raise TypeError(
        f"params: {name} is a {type(v).__name__}; a program takes numbers, strings, booleans, null and arrays of them"
    )


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON (a number must be finite)")


def _loads(line: bytes):
    return json.loads(line, parse_constant=_reject_constant)


def _dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


# ------------------------------------------------------------------ the process
_LIVE: "weakref.WeakSet[ProcessTarget]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for t in list(_LIVE):
        t.close()


def _positive(value, name: str, hi: float = 86_400.0) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < float(value) <= hi:
        raise ValueError(f"{name} must be a number of seconds in (0, {hi:g}], got {value!r}")
    return float(value)


class ProcessTarget:
    """A program that speaks the protocol, seen as Python callables (module docstring).

    command: the command line (a str, split like a shell does, with no shell; or a list of
        arguments). cwd, env: its working directory and environment (default: ours).
    algorithm: the registered algorithm named in the hello (None: an audit of any mechanism).
    timeout: seconds allowed per response; start_timeout: seconds to the hello response.
    batch: releases per request (1 to ``MAX_SIZE``).
    transcript: a file path; every request and response line is appended to it (">" and "<"
        prefixes), for debugging a program and for documentation.
    """

    userdp_seeded = True  # engine/parallel.py SEEDED: one seed must give the same releases (checked)

    def __init__(
        self,
        command,
        *,
        algorithm: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        batch: int = DEFAULT_BATCH,
        cwd=None,
        env: Mapping | None = None,
        transcript=None,
    ):
        if isinstance(command, str):
            argv = shlex.split(command)
        elif isinstance(command, Sequence) and all(isinstance(a, str) for a in command):
            argv = list(command)
        else:
            raise TypeError(f"command must be a str or a list of str, got {type(command).__name__} {command!r:.80}")
        if not argv:
            raise ValueError("command must name a program, got an empty command line")
        if algorithm is not None and not isinstance(algorithm, str):
            raise TypeError(f"algorithm must be None or a registered algorithm's name (str), got {algorithm!r:.80}")
        if isinstance(batch, bool) or not isinstance(batch, numbers.Integral) or not 1 <= batch <= MAX_SIZE:
            raise ValueError(f"batch must be an int in [1, {MAX_SIZE}] (releases per request), got {batch!r}")
        if env is not None and not isinstance(env, Mapping):
            raise TypeError(f"env must be None or a mapping, got {type(env).__name__}")
        if cwd is not None and (not isinstance(cwd, (str, os.PathLike)) or not os.path.isdir(cwd)):
            raise ValueError(f"cwd must be None or an existing directory, got {cwd!r:.80}")
        if transcript is not None and not isinstance(transcript, (str, os.PathLike)):
            raise TypeError(f"transcript must be None or a file path, got {type(transcript).__name__}")
        self.argv = argv
        self.command = command if isinstance(command, str) else shlex.join(argv)
        self.algorithm = algorithm
        self.timeout = _positive(timeout, "timeout")
        self.start_timeout = _positive(start_timeout, "start_timeout")
        self.batch = int(batch)
        self.cwd = cwd
        self.env = None if env is None else dict(env)
        self.transcript = None if transcript is None else os.fspath(transcript)
        self._lock = threading.RLock()
        self._proc = None
        self._stderr = None
        self._buf = bytearray()
        self._owner = None
        self._hello = None
        self._next = 0
        _LIVE.add(self)

    # ------------------------------------------------------------- life cycle
    def __getstate__(self):
        state = self.__dict__.copy()
        state.update(_lock=None, _proc=None, _owner=None, _hello=None, _stderr=None, _buf=bytearray(), _chunk=None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()
        _LIVE.add(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass

    def __repr__(self) -> str:
        return f"ProcessTarget({self.command!r}, algorithm={self.algorithm!r})"

    @property
    def pid(self) -> int | None:
        """The program's process id while it runs in this process, else None."""
        return self._proc.pid if self._proc is not None and self._owner == os.getpid() else None

    @property
    def hello(self) -> dict:
        """The program's hello response (``stages``, ``releases``, ``name``); starts it if needed."""
        with self._lock:
            self._ensure()
            return dict(self._hello)

    @property
    def name(self) -> str:
        return self.hello.get("name") or self.command

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(self.hello["stages"])

    @property
    def releases(self) -> bool:
        return bool(self.hello["releases"])

    def close(self) -> None:
        """End the program: close its stdin, give it ``GRACE`` seconds, kill its process group."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            proc = self._proc
            if proc is None:
                return
            if self._owner != os.getpid():  # a forked copy: the process is the parent's
                self._proc = None
                return
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=GRACE)
            except subprocess.TimeoutExpired:
                pass
            self._kill()

    def _kill(self) -> None:
        proc, self._proc, self._hello = self._proc, None, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the group: children the program started too
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.kill()
        except OSError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # not reapable (uninterruptible sleep): nothing more to do
            pass
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _ensure(self) -> None:
        if self._proc is not None and self._owner != os.getpid():
            self._proc, self._hello = None, None  # forked or unpickled: start our own
        if self._proc is not None:
            return
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                cwd=self.cwd,
                env=self.env,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as exc:
            self._stderr.close()
            self._stderr = None
            raise CommandError(self.command, f"could not be started: {exc}") from None
        self._owner = os.getpid()
        self._buf = bytearray()
        self._chunk = bytearray(_READ)
        self._next = 0
        for f in (self._proc.stdin, self._proc.stdout):
            os.set_blocking(f.fileno(), False)
            try:  # room for several responses in flight: the program computes while we decode
                import fcntl

                fcntl.fcntl(f.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_SIZE)
            except (ImportError, OSError):
                pass  # not Linux, or above /proc/sys/fs/pipe-max-size: the default capacity works too
        hello = {"protocol": PROTOCOL, "id": 0, "hello": {"algorithm": self.algorithm, "client": _client()}}
        self._next = 1
        line = _dumps(hello)
        resp = self._exchange([(0, line, "hello", "hello_response")], self.start_timeout, started=True)[0]
        if "error" in resp:
            self._fail(f"refused the hello: {resp['error']['message']}", "hello")
        self._hello = resp["hello"]

    # ------------------------------------------------------------- one exchange
    def _fail(self, reason: str, request: str | None = None):
        tail = ""
        if self._stderr is not None:
            try:
                self._stderr.seek(0, os.SEEK_END)
                size = self._stderr.tell()
                self._stderr.seek(max(0, size - STDERR_TAIL))
                tail = self._stderr.read().decode("utf-8", "replace")
            except OSError:
                pass
        self._kill()
        raise TargetError(self.command, reason, request, tail)

    def _exited(self) -> str:
        try:
            code = self._proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return "closed its stdout while still running"
        if code < 0:
            try:
                return f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def _log(self, prefix: str, data: bytes | str) -> None:
        if self.transcript is not None:
            text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
            try:
                with open(self.transcript, "a", encoding="utf-8") as fh:
                    for line in text.splitlines():
                        fh.write(f"{prefix} {line}\n")
            except OSError as exc:
                self._kill()
                raise TranscriptError(self.transcript, exc) from None

    def _exchange(self, requests: list, timeout: float | None = None, *, started: bool = False) -> list:
        """Write every request (id, line, summary, response kind), read one response per request in order;
        return the parsed responses (error responses included). Any breach: ``TargetError``."""
        if not started:
            self._ensure()
        timeout = self.timeout if timeout is None else timeout
        if self._buf:
            self._fail(f"wrote output nobody asked for: {bytes(self._buf[:120])!r}", requests[0][2])
        payload = ("\n".join(r[1] for r in requests) + "\n").encode("utf-8")
        self._log(">", payload)
        out = memoryview(payload)
        pos, got = 0, []
        stdin, stdout = self._proc.stdin.fileno(), self._proc.stdout.fileno()
        sel = selectors.DefaultSelector()
        sel.register(stdout, selectors.EVENT_READ)
        sel.register(stdin, selectors.EVENT_WRITE)
        writing, start = True, 0
        deadline = time.monotonic() + timeout
        try:
            while len(got) < len(requests):
                left = deadline - time.monotonic()
                if left <= 0:
                    what = "hello" if requests[0][0] == 0 else "request"
                    self._fail(
                        f"did not answer within {timeout:g} s (the {what}'s deadline) and was killed",
                        requests[len(got)][2],
                    )
                for key, _ in sel.select(left):
                    if key.fd == stdin:
                        try:
                            pos += os.write(stdin, out[pos : pos + 65536])
                        except BlockingIOError:
                            continue
                        except (BrokenPipeError, ConnectionResetError):
                            writing = False  # it stopped reading: its exit shows on stdout
                            sel.unregister(stdin)
                            continue
                        if pos == len(out):
                            writing = False
                            sel.unregister(stdin)
                        continue
                    try:
                        k = os.readv(stdout, [self._chunk])
                    except BlockingIOError:
                        continue
                    if not k:
                        self._fail(f"{self._exited()} before answering", requests[len(got)][2])
                    self._buf += memoryview(self._chunk)[:k]
                    head = 0  # the start of the unread line in the buffer
                    lines = []
                    with memoryview(self._buf) as view:  # one copy per line (released before the del)
                        while len(got) + len(lines) < len(requests):
                            i = self._buf.find(b"\n", max(start, head))
                            if i < 0:
                                break
                            lines.append(bytes(view[head:i]))
                            head = i + 1
                    if len(self._buf) - head > MAX_LINE:
                        due = min(len(got) + len(lines), len(requests) - 1)
                        self._fail(f"wrote a line longer than {MAX_LINE} bytes", requests[due][2])
                    for line in lines:
                        self._log("<", line)
                        got.append(self._parse(line, requests[len(got)]))
                        deadline = time.monotonic() + timeout
                    del self._buf[:head]  # once per read, not once per line
                    start = len(self._buf)
        finally:
            sel.close()
        if writing:  # answered everything before reading it all: a breach
            self._fail("answered before reading its requests", requests[-1][2])
        return got

    def _parse(self, line: bytes, request) -> dict:
        rid, _, summary, expected = request
        if expected == "release_response":
            fast = _fast_packed(line)
            if fast is not None and fast[0] == rid:
                return {"id": rid, "releases_hex": {"shape": fast[1], "raw": fast[2]}}
        try:
            msg = _loads(line)
        except (ValueError, UnicodeDecodeError):
            self._fail(f"wrote a line that is not JSON: {line[:160]!r}", summary)
        if not isinstance(msg, dict) or "id" not in msg:
            self._fail(f'wrote {show(msg)}, not a response object with an "id"', summary)
        if msg.get("id") != rid:
            self._fail(f"answered id {show(msg.get('id'))} where the response to request {rid} was due", summary)
        kind = "error_response" if "error" in msg else expected
        try:
            if kind == "release_response" and isinstance(msg.get("releases"), list):
                check_message({**msg, "releases": []}, kind)  # the releases: _releases (fast path)
            elif not (kind == "release_response" and _plain_packed(msg)):
                check_message(msg, kind)
        except SchemaViolation as exc:
            self._fail(f"wrote a response that {exc}", summary)
        return msg

    def _request_id(self) -> int:
        rid = self._next
        self._next += 1
        return rid

    def _raise_error(self, resp: dict, summary: str):
        err = resp["error"]
        cls = ProgramRefused if err["kind"] == "refused" else ProgramFailed
        raise cls(f"{self.name} {err['kind']} ({summary}): {err['message']}")

    # ------------------------------------------------------------- the callables
    def mechanism(self, dataset, rng, size=None, **params):
        """``size`` releases (one, without the leading axis, for ``size=None``): an ndarray of shape
        (size, ...), a masked array whose masked rows are "no release" (the program's nulls), or a
        tuple of arrays for releases that are tuples. The requests' seeds are drawn from ``rng``."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(
                f"rng must be a numpy.random.Generator (the requests' seeds are drawn from it), "
                f"got {type(rng).__name__}"
            )
        if size is None:
            n = 1
        elif isinstance(size, bool) or not isinstance(size, numbers.Integral) or not 1 <= size <= 10**8:
            raise ValueError(f"size must be None or an int in [1, 10^8] (the number of releases), got {size!r}")
        else:
            n = int(size)
        tail = ',"dataset":' + _dumps(encode_dataset(dataset)) + ',"params":' + _dumps(encode_params(params)) + "}"
        with self._lock:
            self._ensure()
            if not self._hello["releases"]:
                raise TypeError(f'{self.name} declares no releases (its hello says "releases": false)')
            sizes = [self.batch] * (n // self.batch) + ([n % self.batch] if n % self.batch else [])
            seeds = rng.integers(0, SEED_LIMIT, size=len(sizes))
            requests, about = [], _describe(dataset, params)
            for k, m in zip(seeds.tolist(), sizes):
                rid = self._request_id()
                requests.append(
                    (
                        rid,
                        f'{{"protocol":{PROTOCOL},"id":{rid},"seed":{k},"size":{m}{tail}',
                        f"release id {rid}, size {m}, seed {k}, {about}",
                        "release_response",
                    )
                )
            responses = self._exchange(requests)
            for resp, req in zip(responses, requests):
                if "error" in resp:
                    self._raise_error(resp, req[2])
            parts = [self._releases(resp, m, req) for resp, m, req in zip(responses, sizes, requests)]
            try:
                out = concat(parts) if len(parts) > 1 else parts[0]
            except ValueError as exc:
                self._fail(f"changed the form of its releases between requests: {exc}", requests[-1][2])
        if size is None:
            return tuple(p[0] for p in out) if isinstance(out, tuple) else out[0]
        return out

    def _releases(self, resp: dict, size: int, request):
        summary = request[2]
        if "releases_hex" in resp:
            return self._packed(resp["releases_hex"], size, summary)
        items = resp["releases"]
        if len(items) != size:
            self._fail(f"answered {len(items)} release(s) for size {size}", summary)
        try:
            a = np.array(items)
        except (ValueError, TypeError):
            a = None
        if a is not None and a.dtype.kind in "iuf" and a.ndim >= 1:
            if a.dtype.kind == "f" and not np.isfinite(a).all():  # 1e400 is JSON, and overflows a double
                self._fail(f"wrote a release that is not finite ({float(a[~np.isfinite(a)].flat[0])!r})", summary)
            if a.size == 0:
                self._fail("wrote empty releases ([]): a release is a number or an array of at least one", summary)
            return a
        for j, r in enumerate(items):  # the slow path: say what is wrong, or decode the unusual
            try:
                check_message(r, "release")
            except SchemaViolation as exc:
                self._fail(f"wrote release {j} that {exc}", summary)
        try:
            if any(r is None for r in items):
                out = masked(items)
            elif all(isinstance(r, list) for r in items) and a is None:
                out = tuples(items)
            else:
                out = np.array(items, dtype=float)
        except ValueError as exc:
            self._fail(f"wrote releases that do not share one shape: {exc}", summary)
        except (OverflowError, TypeError) as exc:  # an integer of 400 digits is JSON, and no binary64
            self._fail(f"wrote a release that is not a binary64 number ({type(exc).__name__}: {exc})", summary)
        why = unreadable(out)
        if why is not None:
            self._fail(f"wrote {why}", summary)
        return out

    def _packed(self, packed: dict, size: int, summary: str) -> np.ndarray:
        shape = tuple(int(k) for k in packed["shape"])
        if shape[0] != size:
            self._fail(f"answered {shape[0]} release(s) for size {size} (releases_hex shape {list(shape)})", summary)
        try:
            raw = packed["raw"] if "raw" in packed else binascii.unhexlify(packed["data"])
        except (binascii.Error, ValueError) as exc:
            self._fail(f"wrote releases_hex data that is not hexadecimal: {exc}", summary)
        count = math.prod(shape)
        if len(raw) != 8 * count:
            self._fail(
                f"wrote releases_hex of {len(raw)} bytes for shape {list(shape)} ({8 * count} bytes of binary64)",
                summary,
            )
        a = np.frombuffer(raw, dtype="<f8").reshape(shape).astype(float)
        if not np.isfinite(a).all():
            self._fail(
                f"wrote a release that is not finite ({float(a[~np.isfinite(a)].flat[0])!r}) in releases_hex", summary
            )
        return a

    def stage_values(self, dataset, params: Mapping, stages: Sequence[str]) -> dict:
        """One stages request: {stage: decoded value} for the named ``stages`` (``decode_value``)."""
        if (
            isinstance(stages, (str, bytes))
            or not isinstance(stages, Sequence)
            or not stages
            or not all(isinstance(s, str) and s for s in stages)
        ):
            raise TypeError(f"stages must be a non-empty list of stage names, got {stages!r:.80}")
        names = list(dict.fromkeys(stages))
        data = None if dataset is None else encode_dataset(dataset)
        encoded = encode_params(params)
        with self._lock:
            self._ensure()
            missing = [s for s in names if s not in self._hello["stages"]]
            if missing:
                raise TypeError(
                    f"{self.name} declares no stage {', '.join(missing)} (its stages: "
                    f"{', '.join(self._hello['stages']) or 'none'})"
                )
            rid = self._request_id()
            req = {"protocol": PROTOCOL, "id": rid, "dataset": data, "params": encoded, "stages": names}
            summary = f"stages id {rid}: {', '.join(names)}, {_describe(dataset, params)}"
            resp = self._exchange([(rid, _dumps(req), summary, "stages_response")])[0]
            if "error" in resp:
                self._raise_error(resp, summary)
            got = resp["stages"]
            if set(got) != set(names):
                self._fail(f"answered stages {sorted(got)} for {sorted(names)}", summary)
            out = {}
            for s in names:
                try:
                    out[s] = decode_value(got[s])
                except (TypeError, ValueError, OverflowError) as exc:
                    self._fail(f"wrote a value of stage {s} that userdp cannot read: {exc}", summary)
            return out

    def stage(self, name: str):
        """The stage ``name`` as a callable ``f(dataset, **params)`` (or ``f(**params)``)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"name must be a stage name (str), got {name!r:.80}")

        def call(*args, **params):
            if len(args) > 1:
                raise TypeError(
                    f"stage {name} takes the dataset as its only positional argument, "
                    f"got {len(args)} positional arguments"
                )
            return self.stage_values(args[0] if args else None, params, [name])[name]

        call.__name__ = call.__qualname__ = f"{name}_over_the_protocol"
        return call

    def adapter(self, adapter_type=None, name: str | None = None):
        """An ``Adapter`` (or ``adapter_type``, e.g. a paper's adapter type) whose stages are the
        program's: the stages its hello declares, and its mechanism if it releases."""
        from userdp.properties.adapter import Adapter

        adapter_type = Adapter if adapter_type is None else adapter_type
        if not (isinstance(adapter_type, type) and issubclass(adapter_type, Adapter)):
            raise TypeError(f"adapter_type must be an Adapter class, got {adapter_type!r:.80}")
        if name is not None and (not isinstance(name, str) or not name):
            raise TypeError(f"name must be None or a non-empty str, got {name!r:.80}")
        hello = self.hello
        slots = [s for s in adapter_type.STAGES if s != "mechanism"]
        unknown = [s for s in hello["stages"] if s not in slots]
        if unknown:
            hint = (
                ' (a program that draws releases says "releases": true in its hello instead)'
                if "mechanism" in unknown
                else ""
            )
            raise ValueError(
                f"the program {self.command!r} declares stage(s) {', '.join(unknown)}, which "
                f"{adapter_type.__name__} does not have; its stages: {', '.join(slots)}{hint}"
            )
        kw = {s: self.stage(s) for s in hello["stages"]}
        if hello["releases"]:
            kw["mechanism"] = self.mechanism
        return adapter_type(name or self.name, **kw)


_PACKED_HEAD = re.compile(
    rb'\{"id":(0|[1-9][0-9]{0,17}),"releases_hex":\{"shape":\[([1-9][0-9]{0,9}(?:,[1-9][0-9]{0,9})*)'
    rb'\],"data":"'
)


def _fast_packed(line: bytes):
    """(id, shape, bytes) of a packed release response written exactly as the schema's keys in
    order and without spaces (what JSON.stringify, json.dumps(separators=(",", ":")) and the like
    write), else None. Equivalent to parsing it: the head and tail are matched literally and
    ``unhexlify`` accepts hexadecimal digits only. Anything else takes the general path."""
    head = _PACKED_HEAD.match(line)
    if head is None or not line.endswith(b'"}}'):
        return None
    try:
        raw = binascii.unhexlify(memoryview(line)[head.end() : -3])
    except (binascii.Error, ValueError):
        return None
    return int(head.group(1)), [int(k) for k in head.group(2).split(b",")], raw


def _plain_packed(msg: dict) -> bool:
    """True for a release response in the packed form whose envelope is certainly valid (the hot
    path of a large batch); False sends it through ``check_message``, which names what is wrong."""
    p = msg.get("releases_hex")
    if len(msg) != 2 or type(msg.get("id")) is not int or msg["id"] < 0 or type(p) is not dict or len(p) != 2:
        return False
    shape, data = p.get("shape"), p.get("data")
    return (
        type(data) is str and type(shape) is list and len(shape) >= 1 and all(type(k) is int and k >= 1 for k in shape)
    )


def _client() -> str:
    try:
        from importlib.metadata import version

        return f"userdp {version('userdp')}"
    except Exception:  # not installed as a distribution (a source tree)
        return "userdp"


def _describe(dataset, params) -> str:
    n = getattr(dataset, "n", None) if dataset is not None else None
    data = (
        "no dataset"
        if dataset is None
        else f"{n} record{'' if n == 1 else 's'}"
        if n is not None
        else type(dataset).__name__
    )
    text = ", ".join(
        f"{k}={show(_param(v, k)) if not isinstance(v, np.ndarray) else f'array{v.shape}'}" for k, v in params.items()
    )
    return f"{data}; {text or 'no params'}"
