"""The tools the model calls, confined to the session's workspace."""
