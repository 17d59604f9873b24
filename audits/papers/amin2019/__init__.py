"""The audit side of Amin et al. 2019 (``reference/amin2019.py`` opens with the citation).

Importing this package registers what its modules hold (``audits/papers/__init__.py`` says
which file holds what); the paper map is ``docs/papers/amin2019.md``.
"""

from userdp.audits.papers.amin2019 import (  # noqa: F401  (imported for their registrations)
    audits,
    audits_erm,
    specs,
    specs_erm,
    vectors,
    whitebox,
)

__all__: list[str] = []
