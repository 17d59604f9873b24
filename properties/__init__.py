"""userdp.properties: one Hypothesis property suite per algorithm, named as its reference module
(``amin2019``, ``epasto2020_gwa``, ...), each in the common shape (``ALL_PROPERTIES``,
``STRATEGIES``, ``EXAMPLES``, ``RELATION``, ``ADAPTER``, ``REFERENCE``); ``adapter`` runs a suite
on anyone's stages, ``strategies`` holds the shared builders (docs/design.md §4-5).
"""

__all__: list[str] = []
