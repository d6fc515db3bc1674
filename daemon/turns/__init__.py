"""From `session.submit` to `turn.finished`: the queue, one turn, the
parts it is assembled from, its route, its skill, and what an interrupted one left.
"""
