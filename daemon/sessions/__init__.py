"""Live sessions: their history and numbered events, the clients attached,
the approvals pending, and what a reconnecting client is replayed.
"""
