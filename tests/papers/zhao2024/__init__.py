"""The tests of Zhao et al. 2024 (``zhao2024*``): reference tests, audits and reproductions, planted bugs
(``planted*.py``), corpus entries of ``userdp validate`` (``corpus*.py``) and bad-input rows (``bad_input.py``)."""
