"""Events cut or split to their limit, answers capped, history in pages (issue 10 item 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.server.outgoing import EVENT_LIMIT, fit_response
from coding_harness.daemon.sessions.history_pages import history_page
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol import errors
from coding_harness.protocol.history_pages import read_history, read_message_text


def session() -> Session:
    return Session(id="s1", cwd=Path("/tmp"))


def wire_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def test_a_long_delta_becomes_several_events_with_nothing_lost() -> None:
    target = session()
    text = "é" * (3 * EVENT_LIMIT)  # two bytes a character
    target.emit("text.delta", {"text": text})
    assert len(target.events) > 5
    assert "".join(e.data["text"] for e in target.events) == text
    assert [e.seq for e in target.events] == list(range(1, len(target.events) + 1))
    assert all(wire_size(e.notification("s1")) <= EVENT_LIMIT for e in target.events)


def test_a_long_reply_is_cut_with_a_note_naming_the_history_message() -> None:
    target = session()
    reply = "r" * (5 * EVENT_LIMIT)
    target.history = [{"role": "user", "content": "go"}, {"role": "assistant", "content": reply}]
    event = target.emit("turn.finished", {"turn": "t1", "exit_code": 0, "reply": reply})
    assert wire_size(event.notification("s1")) <= EVENT_LIMIT
    data = event.data
    assert data["reply_message"] == 1
    assert data["cut"]["reply"]["chars"] == len(reply)
    shown = data["cut"]["reply"]["shown"]
    assert data["reply"][:shown] == reply[:shown] and shown > EVENT_LIMIT // 2
    assert 'session.history {"offset": 1, "limit": 1} pages the whole text' in data["reply"]
    assert target.pending_events[-1][2] is data  # the store keeps the cut event too


def test_other_events_cut_their_longest_strings_only() -> None:
    target = session()
    event = target.emit(
        "approval.requested", {"request": "a1", "path": "big.txt", "diff": "+x\n" * EVENT_LIMIT}
    )
    assert event.data["request"] == "a1" and event.data["path"] == "big.txt"
    assert "cut here" in event.data["diff"] and set(event.data["cut"]) == {"diff"}


def test_an_answer_over_the_limit_becomes_an_error_and_a_batch_loses_its_largest() -> None:
    big = {"jsonrpc": "2.0", "id": 3, "result": {"x": "y" * 5000}}
    refused = json.loads(fit_response(big, 1000) or b"")
    assert refused["id"] == 3 and refused["error"]["code"] == errors.MessageTooLarge.code
    small = {"jsonrpc": "2.0", "id": 4, "result": 1}
    batch = json.loads(fit_response([small, big, small], 1000) or b"")
    assert batch[0] == small and batch[2] == small and "error" in batch[1]
    assert fit_response({"jsonrpc": "2.0", "method": "event", "params": "z" * 5000}, 1000) is None


def messages(*sizes: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": chr(97 + i) * size} for i, size in enumerate(sizes)]


def test_pages_hold_whole_messages_up_to_the_budget() -> None:
    history = messages(300, 300, 300, 300)
    first = history_page(history, budget=1400)
    assert first["messages"] == history[:2] and first["next_offset"] == 2
    assert first["total"] == 4 and first["partial"] is None
    rest = history_page(history, offset=2, budget=1400)
    assert rest["messages"] == history[2:] and rest["next_offset"] is None
    assert history_page(history, offset=-1)["messages"] == history[3:]
    assert history_page(history, limit=0) == {**first, "messages": [], "next_offset": 0}
    assert history_page(history, offset=1, limit=2)["next_offset"] == 3


def test_a_message_larger_than_a_page_comes_in_slices() -> None:
    history = messages(100, 10_000, 100)
    page = history_page(history, offset=1, budget=3000)
    assert page["partial"]["start"] == 0 and page["next_offset"] == 1
    assert page["next_text_offset"] == page["partial"]["end"]
    assert wire_size(page) <= 3000
    with pytest.raises(errors.InvalidParams, match="past the end"):
        history_page(history, offset=1, text_offset=10_000)


class PagedConnection:
    """What `read_history` needs of a connection, answered by `history_page` directly."""

    def __init__(self, history: list[dict[str, Any]], budget: int) -> None:
        self.history, self.budget, self.calls = history, budget, 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        options = {k: v for k, v in params.items() if k != "session"}
        return history_page(self.history, budget=self.budget, **options)


def test_the_client_pages_and_joins_a_history_back_whole() -> None:
    history = [*messages(100, 50_000, 100), {"role": "tool", "content": None}]
    conn = PagedConnection(history, 3000)
    assert read_history(conn, "s1") == history  # type: ignore[arg-type]
    assert conn.calls > 20
    assert read_message_text(conn, "s1", 1) == history[1]["content"]  # type: ignore[arg-type]
    assert read_history(conn, "s1", offset=-2, limit=1) == history[2:3]  # type: ignore[arg-type]
