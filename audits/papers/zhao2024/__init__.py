"""The audit side of Zhao et al. 2024 (``reference/zhao2024.py`` opens with the citation).

Importing this package registers what its modules hold (``audits/papers/__init__.py`` says
which file holds what); the paper map is ``docs/papers/zhao2024.md``.
"""

from userdp.audits.papers.zhao2024 import (  # noqa: F401  (imported for their registrations)
    audits,
    audits_wme,
    calibration,
    reproductions,
    specs,
    specs_wme,
    vectors,
    whitebox,
)

__all__: list[str] = []
