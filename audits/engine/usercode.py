"""The user's code as userdp meets it: importing ``module:object`` with the current directory on
the import path, calling it as a watched region, and the two errors that set the exit status
(``UsageError``, 2: bad input to userdp; ``UserCodeError``, 3: the user's code raised). Used by
``userdp audit`` (audits/cli/targets.py), ``userdp validate`` and ``userdp bench``.
"""

from __future__ import annotations

import importlib
import os
import sys

from userdp.audits.engine import watch
from userdp.audits.engine.sampling import is_interrupt, raised_text

__all__ = ["UsageError", "UserCodeError", "user_code", "import_user_module"]


class UsageError(Exception):
    """Bad command-line input: exit status 2."""


class UserCodeError(Exception):
    """The user's own factory, pairs or mechanism raised: exit status 3."""


def user_code(what: str, f, *args, **kwargs):
    """``f(*args, **kwargs)``, the user's code, as a watched region named ``what``; anything it
    raises, ``SystemExit`` and every other ``BaseException`` included (not a real Ctrl-C),
    is a ``UserCodeError`` naming ``what``: user code never sets userdp's exit status."""
    with watch.region(what):
        try:
            return f(*args, **kwargs)
        except (UsageError, UserCodeError):
            raise
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            raise UserCodeError(f"{what} {raised_text(exc)}") from exc


def import_user_module(target: str, what: str = "an external mechanism is module:callable", usage_error: type = None):
    """(module, attribute) of ``module:attribute``, imported with the current directory on the
    import path, as ``python -m`` does. A malformed text or a module that cannot be found is
    ``usage_error`` (default ``UsageError``; exit 2); a module that raises on import is the
    user's code (``UserCodeError``; exit 3)."""
    usage_error = usage_error or UsageError
    if not isinstance(target, str):
        raise TypeError(f"target must be a str module:attribute, got {type(target).__name__} {target!r:.80}")
    mod_name, _, attr = target.partition(":")
    if not mod_name or not attr:
        raise usage_error(f"{what}, got {target!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    with watch.region(f"importing your module {mod_name!r}"):
        try:
            module = importlib.import_module(mod_name)
        except ImportError as exc:
            raise usage_error(f"cannot import {mod_name!r} (from {target!r}): {exc}") from exc
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            raise UserCodeError(f"importing your module {mod_name!r} {raised_text(exc)}") from exc
    return module, attr
