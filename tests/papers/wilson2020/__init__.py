"""Tests of Wilson et al. 2020 (reference/wilson2020.py)."""
