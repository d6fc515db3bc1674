"""Git worktrees for sessions: `--worktree`, `harness worktree list|diff|merge|rm`.

The daemon owns sessions and their folders, so it runs every git command these
need (`git.py`: never a shell, never the repository's hooks), keeps the record
of each worktree it made (`records.py`), makes one (`create.py`), looks at one
(`status.py`), merges one back (`merge.py`) and removes one (`remove.py`).
"""
