"""userdp.reference: the papers' algorithms, one module per paper, and their foundation
(``data``, ``neighbours``, ``claims``, ``mechanisms``). See README.md.

``allow_large_epsilon()`` is the one explicit opt-in for epsilon above 50 (``_checks``).
"""

from ._checks import allow_large_epsilon

__all__ = ["allow_large_epsilon"]
