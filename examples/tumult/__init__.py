"""Tumult Analytics in the validate gallery: its own pinned environment (requirements.txt, run.sh) and
its wrapper (gallery_tumult.py, importable only in that environment). docs/validate.md has the verdicts."""

__all__: list[str] = []
