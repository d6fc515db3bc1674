"""The `harness` command: one-shot runs, the REPL, approvals and daemon control."""
