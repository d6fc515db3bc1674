"""Money: the cost of token usage, and the spending limits a turn stops at."""
