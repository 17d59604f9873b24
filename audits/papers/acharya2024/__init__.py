"""The audit side of Acharya et al. 2024 (``reference/acharya2024.py`` opens with the citation).

``PARTS`` names its modules by the store they register into (``audits/papers/__init__.py`` says
which file holds what, and ``load`` imports a part); the paper map is ``docs/papers/acharya2024.md``.
"""

__all__ = ["PARTS"]

PARTS = {
    "entries": ("audits", "reproductions", "whitebox"),  # audit entries, reproductions, white-box rows
    "specs": ("specs",),  # validate specs
    "vectors": ("vectors",),  # test-vector designs
}
