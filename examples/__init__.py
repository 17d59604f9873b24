"""The gallery of audited DP libraries (docs/audit.md): one module per library.

Each ``gallery_<library>`` module exposes audit targets, factories that ``userdp audit
examples.gallery_<library>:<target>`` calls from the repository root (the current
directory is on the import path for ``module:callable`` targets), and lists them in its
``ENTRIES`` with the relation, the expected verdict and the sample counts the tests use
(``tests/gallery/test_gallery.py``). ``python -m examples.gallery_table`` runs them all
and prints the README's table. ``examples`` is not installed with ``userdp``: it runs from
a checkout, with the optional extra ``pip install -e '.[gallery]'``.
"""
