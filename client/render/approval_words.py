"""Approval answers and turn outcomes said as a person would say them.

`approval.resolved` names who answered as a connection label
(`c11(harness-repl, pid 18170)`) and, from this version on, as fields (`by`:
id, program name, pid). A terminal shows neither raw: `approved in another
terminal (harness REPL, pid 18170)`, or just `approved` for an answer typed
here; an answer from another machine of the team hub: `approved by bob@desk
on desk, through the hub`. A turn's exit code becomes its outcome (`edit rejected`), never `exit
code 3`. The JSON output formats keep the machine fields; this is text only.
"""

from __future__ import annotations

from coding_harness.client.render.sanitize import field
from coding_harness.protocol import exit_codes

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DECISION_WORDS = {
    "yes": "approved",
    "always": "approved for the rest of the session",
    "no": "rejected",
    "skip": "skipped",
    "revert": "approved (put back if the check fails)",
    "expired": "expired",
}
# The `client` names of initialize, as a user knows the programs.
PROGRAM_NAMES = {
    "harness": "harness -p",
    "harness-repl": "harness REPL",
    "harness-attach": "harness attach",
    "harness-approve": "harness approve",
    "harness-web": "harness web",
}
EXIT_WORDS = {
    exit_codes.MODEL_ERROR: "the turn ended with an error",
    exit_codes.CHECK_FAILED: "the check failed after the edit",
    exit_codes.EDIT_REJECTED: "edit rejected",
    exit_codes.DAEMON_UNREACHABLE: "the daemon could not be reached",
    exit_codes.BAD_ARGUMENTS: "the turn was refused",
    exit_codes.INTERRUPTED: "turn cancelled",
}


def decision_word(decision: object) -> str:
    """`yes` -> `approved`; an unknown decision is shown as it came."""
    return DECISION_WORDS.get(str(decision), field(str(decision)))


def program_name(name: object) -> str:
    """`harness-repl` -> `harness REPL`; `harness-acp (zed)` -> `harness acp (zed)`."""
    text = field(str(name or "")) or "a client"
    known = PROGRAM_NAMES.get(text)
    if known is not None:
        return known
    return text.replace("harness-", "harness ", 1) if text.startswith("harness-") else text


def resolved_text(data: dict[str, Any], *, mine: bool) -> str:
    """The one line for an `approval.resolved`; `mine`: this client gave the answer."""
    word = decision_word(data.get("decision"))
    if mine:
        return word
    by = data.get("by")
    if isinstance(by, dict) and str(by.get("id", "")).startswith("hub-"):
        return f"{word} by {field(str(by.get('name') or ''))}, through the hub"
    if isinstance(by, dict):
        name, pid = program_name(by.get("name")), by.get("pid")
        where = "the editor" if name.startswith("harness acp") else "another terminal"
        where = "the browser" if name.startswith("harness web") else where
        shown = f"{name}, pid {pid}" if isinstance(pid, int) else name
        return f"{word} in {where} ({shown})"
    client = field(str(data.get("client") or ""))
    if client.startswith("harnessd"):  # the daemon itself: a time limit, a restart
        reason = field(str(data.get("reason") or "")) or client
        return f"{word}: {reason}"
    return f"{word} in another terminal ({client})" if client else word


def exit_words(code: object) -> str:
    """A turn's exit code as its outcome; '' for success."""
    if code in (0, None):
        return ""
    if isinstance(code, int) and code in EXIT_WORDS:
        return EXIT_WORDS[code]
    return f"the turn ended with code {field(str(code))}"
