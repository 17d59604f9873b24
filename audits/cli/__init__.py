"""The ``userdp`` command (``main.main``): audit, list, reproduce, bench, validate, vectors.

``main`` parses the command line, ``supervise`` runs the user's code in a child process so that
no target can set the exit status, and ``program`` drives a target written in any language
through the process protocol (docs/protocol.md).
"""

__all__: list[str] = []
