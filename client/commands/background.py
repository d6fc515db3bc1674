"""What background work shares: the lines `--bg` prints, and finding one session's
row for `harness logs` and `harness wait`.

`--bg` prints the session's short id alone on standard output (so a script can
keep it: `id=$(harness -p "..." --bg)`), and how to follow it on standard
error; under the JSON output formats, one object on standard output instead.
`session_row` reads `session.list` and picks the session an ID names: its full
id, its short id, or a unique prefix of either.
"""

from __future__ import annotations

import sys
from typing import Any

from coding_harness.client.render.sanitize import field
from coding_harness.protocol import exit_codes, methods
from coding_harness.protocol.client import Connection


class NoSuchSession(Exception):
    pass


def short_id(full: str) -> str:
    return full.rsplit("-", 1)[-1]


def submitted(session: dict[str, Any], turn: dict[str, Any], output_format: str = "text") -> int:
    """`--bg`: say where the turn went, and return at once (under `--output-format
    json` or `stream-json`: one object, `{session, short_id, turn, queued}`)."""
    short = short_id(str(session["session"]))
    if output_format != "text":
        import json

        said = {"session": session["session"], "short_id": short, "turn": turn.get("turn")}
        print(json.dumps({**said, "queued": bool(turn.get("queued"))}), flush=True)
        return exit_codes.OK
    print(short, flush=True)
    queued = " (queued behind the session's running turn)" if turn.get("queued") else ""
    print(
        f"harness: running in the background{queued}: session {field(short)}\n"
        f"  follow it:    harness logs {short} -f\n"
        f"  take part:    harness attach {short}   (approvals: harness approve {short})\n"
        f"  wait for it:  harness wait {short}     (exits with the turn's exit code)",
        file=sys.stderr,
    )
    return exit_codes.OK


def session_row(conn: Connection, wanted: str) -> dict[str, Any]:
    """The `session.list` row of the session `wanted` names, or NoSuchSession."""
    rows: list[dict[str, Any]] = conn.request(methods.SESSION_LIST)["sessions"]
    exact = [row for row in rows if row.get("session") == wanted]
    fits = exact or [
        row
        for row in rows
        if str(row.get("session")).startswith(wanted)
        or short_id(str(row.get("session"))).startswith(wanted)
    ]
    if len(fits) == 1:
        return fits[0]
    shown = field(wanted)
    if fits:
        raise NoSuchSession(f"{shown!r} fits {len(fits)} sessions; give more of the id")
    raise NoSuchSession(f"no session {shown!r}; `harness sessions` lists them")
