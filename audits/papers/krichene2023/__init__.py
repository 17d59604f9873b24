"""The audit side of Krichene et al. 2023 (``reference/krichene2023.py`` opens with the citation).

``PARTS`` names its modules by the store they register into (``audits/papers/__init__.py`` says
which file holds what, and ``load`` imports a part); the paper map is ``docs/papers/krichene2023.md``.
"""

__all__ = ["PARTS"]

PARTS = {
    "entries": ("audits", "reproductions"),  # audit entries, reproductions, white-box rows
    "specs": ("specs",),  # validate specs
    "vectors": ("vectors",),  # test-vector designs
}
