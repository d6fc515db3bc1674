"""`python -m coding_harness.daemon` runs harnessd."""

import sys

from .cli import main

sys.exit(main())
