"""`python -m coding_harness.client` runs `harness`."""

import sys

from .cli import main

sys.exit(main())
