"""The user's hooks: commands the config names, run around tool calls and turns."""
