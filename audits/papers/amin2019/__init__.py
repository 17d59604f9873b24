"""The audit side of Amin et al. 2019 (``reference/amin2019.py`` opens with the citation).

``PARTS`` names its modules by the store they register into (``audits/papers/__init__.py`` says
which file holds what, and ``load`` imports a part); the paper map is ``docs/papers/amin2019.md``.
"""

__all__ = ["PARTS"]

PARTS = {
    "entries": ("audits", "audits_erm", "whitebox"),  # audit entries, reproductions, white-box rows
    "specs": ("specs", "specs_erm"),  # validate specs
    "vectors": ("vectors",),  # test-vector designs
}
