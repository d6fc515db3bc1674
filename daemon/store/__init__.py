"""The SQLite session store, and its two bridges: the recorder that saves a
turn as it goes and the restore that brings sessions back at start.
"""
