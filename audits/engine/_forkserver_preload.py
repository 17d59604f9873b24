"""Imported by the fork server alone, as its preload (``parallel._prepare_forkserver``).

The fork server is the process that forks userdp's worker processes. It stays up while
any worker lives (each holds its "alive" pipe), and each worker dies with its parent, the
fork server (``parallel._install``). So that the workers cannot outlive the process that
started the fork server (killed with SIGKILL, say), the fork server dies with it too
(Linux ``PR_SET_PDEATHSIG``): that process's id comes in ``ENV``, which is then removed so
that nothing forked from here inherits it. Importing this module also preloads the audit
engine; the fork server imports the modules of ``parallel.preload`` too (the command line
registers itself there, as a worker of the ``userdp`` program imports it as its main module),
so that a worker costs a fork and an unpickling.
"""

import os
import signal

from userdp.audits.engine import parallel  # noqa: F401  (the preload: workers start with userdp imported)

__all__ = ["ENV"]

ENV = "USERDP_FORKSERVER_PARENT"  # the environment variable that carries the starting process id

_parent = os.environ.pop(ENV, None)
if _parent is not None and _parent.isdigit():
    if parallel.prctl(1, signal.SIGKILL) and os.getppid() != int(_parent):  # it ended before the call took
        os._exit(1)
