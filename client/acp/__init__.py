"""`harness acp`: an Agent Client Protocol agent that is one more client of the daemon.

An editor starts it and speaks ACP (JSON-RPC 2.0, one message a line) on its
standard input and output; it speaks the daemon's own protocol on the socket and
translates both ways. It never runs the agent itself. Nothing here is imported on
the one-shot path: the ACP schema models (pydantic) take most of a second to load.
"""
