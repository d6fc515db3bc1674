"""`python -m coding_harness.client` runs `harness`."""

import sys

from coding_harness.client.cli import main

sys.exit(main())
