"""harnessd: the long-lived per-user process.

It keeps the configuration, warm provider connections and counters, serves the
JSON-RPC socket and runs agent sessions. `cli` is the composition root.
"""
