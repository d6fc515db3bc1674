"""Tools that write the workspace, and the approval gate, journal and
`make check` every write goes through.
"""
