"""``python -m sac``: the ``sac`` command line (sac.cli.main)."""

import sys

from sac.cli.main import main

sys.exit(main())
