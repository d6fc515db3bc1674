"""The wire between `harness` clients and `harnessd`.

Framing, method and event names, error codes, socket paths and a small
synchronous client. Standard library only, so the one-shot client stays fast
and can never drag the daemon in.
"""
