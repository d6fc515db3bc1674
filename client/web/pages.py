"""The HTML the bridge serves, rendered here, every value escaped.

Two pages, mobile first: the sessions (title, folder, state, cost; app.js keeps
the list live), and one session (its stream, replayed then live, filled in by
app.js from the event stream; its approvals, the task box, cancel, undo and the
permission mode). No inline script or style: the Content-Security-Policy allows
only /static/app.js and /static/app.css.
"""

from __future__ import annotations

from html import escape
from typing import Any

from coding_harness.protocol.modes import PERMISSION_MODES

STATE_WORDS = {"idle": "idle", "running": "running", "waiting": "waiting for you"}


def _page(title: str, body: str, *, kind: str, extra: str = "") -> str:
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta name='referrer' content='no-referrer'>"
        f"<title>{escape(title)}</title>"
        "<link rel='stylesheet' href='/static/app.css'>"
        "<script src='/static/app.js' defer></script>"
        f"</head><body data-page='{kind}'{extra}>{body}</body></html>\n"
    )


def cost_text(cost: Any) -> str:
    return f"${cost:.4f}" if isinstance(cost, (int, float)) else "-"


def session_row(item: dict[str, Any]) -> str:
    session = str(item.get("session", ""))
    title = str(item.get("title") or "") or "(no task yet)"
    state = str(item.get("state", ""))
    return (
        f"<li class='session state-{escape(state)}' data-session='{escape(session)}'>"
        f"<a href='/s/{escape(session)}'><span class='title'>{escape(title)}</span></a>"
        f"<span class='folder'>{escape(str(item.get('cwd', '')))}</span>"
        f"<span class='state'>{escape(STATE_WORDS.get(state, state))}</span>"
        f"<span class='cost'>{escape(cost_text(item.get('cost_usd')))}</span></li>"
    )


def sessions_page(sessions: list[dict[str, Any]], problem: str = "") -> str:
    rows = "".join(session_row(item) for item in sessions)
    empty = "" if sessions else "<p class='empty'>No sessions yet: start one in a terminal.</p>"
    note = f"<p class='problem'>{escape(problem)}</p>" if problem else ""
    body = (
        "<header><h1>harness</h1><span id='link' class='link'>live</span></header>"
        f"<main>{note}{empty}<ul id='sessions' class='sessions'>{rows}</ul></main>"
    )
    return _page("harness: sessions", body, kind="sessions")


def session_page(item: dict[str, Any]) -> str:
    session = str(item.get("session", ""))
    title = str(item.get("title") or "") or "(no task yet)"
    mode = str((item.get("options") or {}).get("mode") or "ask")
    choices = "".join(
        f"<option value='{escape(name)}'{' selected' if name == mode else ''}>"
        f"{escape(name)}</option>"
        for name in PERMISSION_MODES
    )
    state = str(item.get("state", ""))
    body = (
        "<header><a href='/' class='back'>&larr; sessions</a>"
        f"<h1 id='title'>{escape(title)}</h1>"
        f"<p class='meta'><span class='folder'>{escape(str(item.get('cwd', '')))}</span> "
        f"<span id='state' class='state'>{escape(STATE_WORDS.get(state, state))}</span> "
        f"<span id='cost' class='cost'>{escape(cost_text(item.get('cost_usd')))}</span> "
        "<span id='link' class='link'>connecting</span></p></header>"
        "<main><div id='stream' class='stream'></div>"
        "<div id='approvals' class='approvals'></div></main>"
        "<footer><form id='task' class='task'>"
        "<textarea id='text' name='text' rows='2' maxlength='100000' "
        "placeholder='A task, or a /command' required></textarea>"
        "<button type='submit'>Send</button></form>"
        "<div class='controls'>"
        "<button id='cancel' type='button'>Cancel</button>"
        "<button id='undo' type='button'>Undo last turn</button>"
        f"<label>Mode <select id='mode'>{choices}</select></label></div>"
        "<p id='said' class='said' role='status'></p></footer>"
    )
    extra = f" data-session='{escape(session)}' data-seq='0'"
    return _page(f"harness: {title}", body, kind="session", extra=extra)


def missing_page(session: str) -> str:
    body = (
        "<header><a href='/' class='back'>&larr; sessions</a><h1>Not found</h1></header>"
        f"<main><p>No session {escape(session)} in the daemon.</p></main>"
    )
    return _page("harness: not found", body, kind="missing")
