"""harnessd: the long-lived per-user process.

It keeps the configuration, warm provider connections and counters, serves the
JSON-RPC socket and runs agent sessions. `cli` is the composition root.

httpx imports its own command-line tool when click, rich and pygments are
installed (they are: rich is the client's), and those made up about a sixth of
the daemon's start; the daemon never runs that tool. A `None` in `sys.modules`
makes that one import fail, and httpx then goes on without it (its
`ImportError` fallback). Set here, before any daemon module imports httpx.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
