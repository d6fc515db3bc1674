"""How events look on a terminal or a pipe: the printer's policy, the plain
and rich views, styles, tables and diffs.
"""
