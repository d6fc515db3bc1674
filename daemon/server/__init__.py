"""The daemon's endpoint: the socket, JSON-RPC framing and dispatch, each
connection, readiness under a service manager. Nothing here knows sessions.
"""
