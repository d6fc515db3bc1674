"""`python -m coding_harness.daemon` runs harnessd."""

import sys

from coding_harness.daemon.cli import main

sys.exit(main())
