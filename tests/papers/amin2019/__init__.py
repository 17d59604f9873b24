"""The tests of Amin et al. 2019 (``amin2019*``): reference tests, audits and reproductions, planted bugs
(``planted*.py``), corpus entries of ``userdp validate`` (``corpus*.py``) and bad-input rows (``bad_input.py``)."""
