"""The interactive REPL: its input line, its event feed, and the slash commands."""
