"""The audit side of Epasto et al. 2020 (``reference/epasto2020.py`` opens with the citation).

``PARTS`` names its modules by the store they register into (``audits/papers/__init__.py`` says
which file holds what, and ``load`` imports a part); the paper map is ``docs/papers/epasto2020.md``.
"""

__all__ = ["PARTS"]

PARTS = {
    "entries": ("audits", "audits_erm", "audits_gwa", "whitebox"),  # audit entries, reproductions, white-box rows
    "specs": ("specs", "specs_erm", "specs_gwa"),  # validate specs
    "vectors": ("vectors",),  # test-vector designs
}
