"""Reaching the daemon and following a session: start it, create or join,
drive one turn, answer its approvals.
"""
