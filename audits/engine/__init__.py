"""The audit engine: draw releases on neighbouring datasets, choose rejection sets, bound the
privacy loss with confidence (docs/design.md §6).

``harness.audit`` is the entry point (re-exported as ``userdp.audits.audit``); ``sampling``
draws and encodes releases, ``rejection`` and ``search`` choose the tests, ``bounds`` turns
counts into eps / mu lower bounds, ``ceiling`` gives the best bound any test could reach,
``whitebox`` audits a declared noise distribution, ``parallel`` and ``watch`` run the target
in worker processes and record its calls, ``usercode`` imports a user's ``module:object``,
``report`` and ``plot`` present results, ``verdicts`` decides a reproduction's claims.
``registry`` holds the audit entries and reproductions as data (records and a store, loaded from
the catalogue ``audits/papers`` on first use), ``controls`` the paper-free positive controls,
``benchmark`` the records of ``userdp bench``. It imports no paper.
"""

__all__: list[str] = []
