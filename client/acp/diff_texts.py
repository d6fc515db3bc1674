"""A unified diff as the two texts ACP's `diff` content shows side by side.

The daemon publishes each edit as a unified diff (`diff` and `approval.requested`
events); an editor wants `oldText` and `newText`. Each hunk gives the lines it
covers before and after (context lines in both), hunks joined with a blank line,
so the editor's diff view shows exactly what the approval is about. A new file
has no old text (None), as ACP spells it.
"""

from __future__ import annotations


def diff_texts(diff: str) -> tuple[str | None, str]:
    """(old text or None for a new file, new text) of a unified diff."""
    old: list[str] = []
    new: list[str] = []
    new_file = False
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("--- "):
            new_file = line[4:].strip() == "/dev/null"
            in_hunk = False
            continue
        if line.startswith("+++ ") and not in_hunk:
            continue
        if line.startswith("@@"):
            if in_hunk:
                old.append("")
                new.append("")
            in_hunk = True
            continue
        if not in_hunk or line.startswith("\\"):  # "\ No newline at end of file"
            continue
        marker, body = line[:1], line[1:]
        if marker in (" ", ""):
            old.append(body)
            new.append(body)
        elif marker == "-":
            old.append(body)
        elif marker == "+":
            new.append(body)
    new_text = "\n".join(new) + ("\n" if new else "")
    if new_file:
        return None, new_text
    return "\n".join(old) + ("\n" if old else ""), new_text
