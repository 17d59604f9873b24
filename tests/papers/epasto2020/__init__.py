"""The tests of Epasto et al. 2020 (``epasto2020*``): reference tests, audits and reproductions, planted bugs
(``planted*.py``), corpus entries of ``userdp validate`` (``corpus*.py``) and bad-input rows (``bad_input.py``)."""
