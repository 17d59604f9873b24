"""The tests of Krichene et al. 2023 (``krichene2023*``): reference tests, audits and reproductions, planted bugs
(``planted*.py``), corpus entries of ``userdp validate`` (``corpus*.py``) and bad-input rows (``bad_input.py``)."""
