"""Secrets: which variables hold them, keeping them out of logs, and keys
read from credential files.
"""
