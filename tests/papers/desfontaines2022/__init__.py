"""The tests of Desfontaines et al. 2022 (``desfontaines2022``): reference tests, audits and reproductions, planted
bugs (``planted.py``), corpus entries of ``userdp validate`` (``corpus.py``) and bad-input rows (``bad_input.py``)."""
