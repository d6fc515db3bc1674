"""What the model's context holds: measuring it, compacting it, and the plan
kept beside it.
"""
