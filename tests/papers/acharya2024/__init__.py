"""The tests of Acharya et al. 2024 (``acharya2024*``): reference tests, audits and reproductions, planted bugs
(``planted*.py``), corpus entries of ``userdp validate`` (``corpus*.py``) and bad-input rows (``bad_input.py``)."""
