"""`harness daemon ...`: start, stop, status, logs, and installing the
daemon as a per-user service.
"""
