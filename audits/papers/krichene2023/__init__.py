"""The audit side of Krichene et al. 2023 (``reference/krichene2023.py`` opens with the citation).

Importing this package registers what its modules hold (``audits/papers/__init__.py`` says
which file holds what); the paper map is ``docs/papers/krichene2023.md``.
"""

from userdp.audits.papers.krichene2023 import (  # noqa: F401  (imported for their registrations)
    audits,
    reproductions,
    specs,
    vectors,
)

__all__: list[str] = []
