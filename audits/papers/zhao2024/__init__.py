"""The audit side of Zhao et al. 2024 (``reference/zhao2024.py`` opens with the citation).

``PARTS`` names its modules by the store they register into (``audits/papers/__init__.py`` says
which file holds what, and ``load`` imports a part); the paper map is ``docs/papers/zhao2024.md``.
"""

__all__ = ["PARTS"]

PARTS = {
    "entries": (
        "audits",
        "audits_wme",
        "calibration",
        "reproductions",
        "whitebox",
    ),  # audit entries, reproductions, white-box rows
    "specs": ("specs", "specs_wme"),  # validate specs
    "vectors": ("vectors",),  # test-vector designs
}
