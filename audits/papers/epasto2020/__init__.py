"""The audit side of Epasto et al. 2020 (``reference/epasto2020.py`` opens with the citation).

Importing this package registers what its modules hold (``audits/papers/__init__.py`` says
which file holds what); the paper map is ``docs/papers/epasto2020.md``.
"""

from userdp.audits.papers.epasto2020 import (  # noqa: F401  (imported for their registrations)
    audits,
    audits_erm,
    audits_gwa,
    specs,
    specs_erm,
    specs_gwa,
    vectors,
    whitebox,
)

__all__: list[str] = []
