"""The audit side of Desfontaines et al. 2022 (``reference/desfontaines2022.py`` opens with the citation).

``PARTS`` names its modules by the store they register into (``audits/papers/__init__.py`` says
which file holds what, and ``load`` imports a part); the paper map is ``docs/papers/desfontaines2022.md``.
"""

__all__ = ["PARTS"]

PARTS = {
    "entries": ("audits", "reproductions"),  # audit entries, reproductions
    "specs": ("specs",),  # validate specs
    "vectors": ("vectors",),  # test-vector designs
}
