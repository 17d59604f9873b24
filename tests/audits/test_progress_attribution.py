"""The supervisor's progress line blames the user's code only for the user's own time.

A ``--quick`` run on a fast program target spends most of its quiet stretches in userdp's own
work (the checks between calls), with many short calls of the program; the line used to name
whichever call happened to be running at the moment it was printed ("your stage statistic ...
0.0 s so far"). The slots now sum the seconds spent in the user's code (``watch.Slot``), and the
supervisor (``audits/cli/supervise.py``) names a call only when the user's code took at least
half of the stretch. Here a real slot and the real supervisor loop step, on three stretches of
0.15 s: userdp's own work with three 1 ms calls and a call just begun (not blamed); a program
that sleeps in one call (blamed, naming it); and fifteen short calls of 10 ms (blamed as such).
"""

from __future__ import annotations

import os
import time


from userdp.audits.cli import supervise
from userdp.audits.engine import watch

__all__: list[str] = []

STRETCH = 0.15
STAGE = "your stage statistic of --command 'node prog.js'"
MECHANISM = "your mechanism --command 'node prog.js' (ProcessTarget.mechanism)"


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _own_work(slot) -> None:
    """userdp's own work for the stretch, with three calls of 1 ms, and a call just begun."""
    for _ in range(3):
        _spin(STRETCH / 4)
        with _region(slot, STAGE):
            time.sleep(0.001)
    _spin(STRETCH / 4)
    slot.enter(STAGE)


def _asleep(slot) -> None:
    """A program that sleeps in one call for the whole stretch."""
    slot.enter(MECHANISM)
    time.sleep(STRETCH + 0.01)


def _short_calls(slot) -> None:
    """Fifteen calls of 10 ms, none running when the line is printed."""
    for _ in range(15):
        with _region(slot, STAGE):
            time.sleep(STRETCH / 15)
    time.sleep(0.01)


def _stretches(tmp_path, capfd, kinds) -> list[str]:
    slot = watch.Slot(str(tmp_path / str(os.getpid())))
    sup = supervise._Supervisor(os.getpid(), str(tmp_path), -1, -1, "validate")
    sup.quiet = STRETCH
    lines = []
    for kind in kinds:
        sup._watch()  # the look after a line starts the next stretch
        capfd.readouterr()
        kind(slot)
        sup._watch()
        lines.append(capfd.readouterr().err.strip())
        if kind is _own_work or kind is _asleep:
            slot.leave()  # the call left open
    return lines


class _region:
    def __init__(self, slot, label):
        self.slot, self.label = slot, label

    def __enter__(self):
        self.slot.enter(self.label)

    def __exit__(self, *exc):
        self.slot.leave()


def _ran(line: str) -> tuple[float, float]:
    """(X, Y) of "your code ran X s of the last Y s" in a progress line."""
    words = line.split("your code ran ")[1].split()
    return float(words[0]), float(words[5])


def test_progress_blames_the_target_only_for_its_own_time(tmp_path, capfd):
    own, asleep, short = _stretches(tmp_path, capfd, [_own_work, _asleep, _short_calls])
    assert "userdp's own work, not your code's" in own and "your stage" not in own, own
    assert f"working: {MECHANISM}" in asleep, asleep
    assert "working: in your code, many short calls" in short, short
    for line in (asleep, short):
        theirs, stretch = _ran(line)
        assert stretch >= STRETCH and 0.5 * stretch <= theirs <= stretch, line


def test_progress_attribution_planted_bugs_are_caught(tmp_path, capfd, monkeypatch):
    # (1) the outermost leave does not add the region's seconds: the short calls look like none of
    # the user's time; (2) the region still open is not counted: a sleeping program is not blamed.
    with monkeypatch.context() as mp:
        mp.setattr(watch.Slot, "leave", lambda self: self.ints.__setitem__(watch.STATE, 0))
        (short,) = _stretches(tmp_path, capfd, [_short_calls])
        assert "many short calls" not in short, short
    with monkeypatch.context() as mp:
        mp.setattr(watch.SlotView, "user_seconds", lambda self, now: self.user_s)
        (asleep,) = _stretches(tmp_path, capfd, [_asleep])
        assert f"working: {MECHANISM}" not in asleep, asleep
