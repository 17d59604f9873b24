"""The audit side of Wilson et al. 2020 (``reference/wilson2020.py`` opens with the citation).

``PARTS`` names its modules by the store they register into (``audits/papers/__init__.py`` says
which file holds what, and ``load`` imports a part); the paper map is ``docs/papers/wilson2020.md``.
"""

__all__ = ["PARTS"]

PARTS = {
    "entries": ("audits", "reproductions"),  # audit entries and the bias-variance reproduction
    "specs": ("specs",),  # validate specs
    "vectors": ("vectors",),  # test-vector designs
}
