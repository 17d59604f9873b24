"""``python -m userdp.audits.cli``: the ``userdp`` command."""

import sys

from userdp.audits.cli.main import main

sys.exit(main())
