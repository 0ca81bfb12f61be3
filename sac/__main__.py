import sys

from sac.cli import main

sys.exit(main())
