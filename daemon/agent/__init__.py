"""The agent loop: one turn of model calls and tool calls, with its guards."""
