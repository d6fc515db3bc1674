"""The `harness` subcommands that are not the REPL: one-shot, approve,
sessions, trust, doctor, completions.
"""
