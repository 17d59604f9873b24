"""The audit side of Acharya et al. 2024 (``reference/acharya2024.py`` opens with the citation).

Importing this package registers what its modules hold (``audits/papers/__init__.py`` says
which file holds what); the paper map is ``docs/papers/acharya2024.md``.
"""

from userdp.audits.papers.acharya2024 import (  # noqa: F401  (imported for their registrations)
    audits,
    reproductions,
    specs,
    vectors,
    whitebox,
)

__all__: list[str] = []
