"""read_file asks an attached editor for its unsaved buffer (`client.read_text_file`).

The real daemon, the fake model server, and a raw socket client playing the
editor: it announces `capabilities.read_text_file`, attaches, submits a turn
whose scripted model calls read_file, and answers the daemon's request with
buffer text, with an error, or not at all. A hidden file is refused before
any request reaches the editor.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call

READ = "client.read_text_file"
DISK = "x = 'on disk'\n"
BUFFER = "x = 'unsaved in the editor'\n"


class Editor:
    """A raw JSON-RPC client over the daemon's socket, one message per line."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.fspath(path))
        self._buffer = b""
        self._ids = 0

    def close(self) -> None:
        self.sock.close()

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def next(self, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = self.sock.recv(65536)
            assert data, "the daemon closed the connection"
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self._ids += 1
        self.send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        while True:
            message = self.next()
            if message.get("id") == self._ids and "method" not in message:
                assert "result" in message, message
                return message["result"]

    def until(self, kind: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The next event of `kind`, and the daemon's requests that came before it."""
        asked = []
        while True:
            message = self.next()
            if message.get("method") == "event" and message["params"]["kind"] == kind:
                return message["params"]["data"], asked
            if message.get("method") == READ:
                asked.append(message)


def open_editor(sandbox: Sandbox, reads: bool = True) -> tuple[Editor, str]:
    editor = Editor(sandbox.socket)
    capabilities = {"approvals": True, "stream": True, "read_text_file": reads}
    params = {"client": {"name": "editor"}, "protocol": 1, "capabilities": capabilities}
    editor.request("initialize", params)
    session = editor.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
    editor.request("session.attach", {"session": session})
    return editor, session


def submit(editor: Editor, session: str) -> None:
    params = {"session": session, "text": "read it", "options": {"route": "coding"}}
    editor.request("session.submit", params)


def asked_for(editor: Editor) -> dict[str, Any]:
    """The daemon's next request to the editor (events before it are skipped)."""
    while True:
        message = editor.next()
        if message.get("method") == READ:
            return message


def test_read_file_shows_the_editors_unsaved_buffer(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    (sandbox.workspace / "app.py").write_text(DISK)
    model.add(Reply(tool_calls=[tool_call("read_file", path="app.py")]), Reply(content="read"))
    editor, session = open_editor(sandbox)
    try:
        submit(editor, session)
        request = asked_for(editor)
        real = (sandbox.workspace / "app.py").resolve()
        assert request["params"] == {"session": session, "path": str(real)}
        assert str(request["id"]).startswith("d")
        editor.send({"jsonrpc": "2.0", "id": request["id"], "result": {"content": BUFFER}})
        result, _ = editor.until("tool.result")
        assert result["result"] == BUFFER
        finished, _ = editor.until("turn.finished")
        assert finished["exit_code"] == 0
    finally:
        editor.close()
    assert model.requests[1]["messages"][-1]["content"] == BUFFER


def test_an_editor_that_errs_or_stays_silent_gets_the_disk_text(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    (sandbox.workspace / "a.py").write_text(DISK)
    (sandbox.workspace / "b.py").write_text("y = 2\n")
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="a.py")]),
        Reply(tool_calls=[tool_call("read_file", path="b.py")]),
        Reply(content="read both"),
    )
    editor, session = open_editor(sandbox)
    try:
        submit(editor, session)
        request = asked_for(editor)
        error = {"code": -32002, "message": "resource not found"}
        editor.send({"jsonrpc": "2.0", "id": request["id"], "error": error})
        result, _ = editor.until("tool.result")
        assert result["result"] == DISK
        silent = asked_for(editor)  # never answered: the daemon reads the disk after 2 s
        assert silent["params"]["path"].endswith("b.py")
        result, _ = editor.until("tool.result")
        assert result["result"] == "y = 2\n"
        editor.send({"jsonrpc": "2.0", "id": silent["id"], "result": {"content": "late"}})
        finished, _ = editor.until("turn.finished")
        assert finished["exit_code"] == 0
        assert editor.request("session.list", {})  # the late answer got no error back
    finally:
        editor.close()


def test_a_hidden_file_is_refused_without_asking_the_editor(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    (sandbox.workspace / ".env").write_text("KEY=secret\n")
    model.add(Reply(tool_calls=[tool_call("read_file", path=".env")]), Reply(content="no"))
    editor, session = open_editor(sandbox)
    try:
        submit(editor, session)
        result, asked = editor.until("tool.result")
        assert "hidden" in result["result"] and "secret" not in result["result"]
        finished, more = editor.until("turn.finished")
        assert asked == more == []
        assert finished["exit_code"] == 0
    finally:
        editor.close()


def test_a_client_without_the_capability_is_never_asked(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    (sandbox.workspace / "app.py").write_text(DISK)
    model.add(Reply(tool_calls=[tool_call("read_file", path="app.py")]), Reply(content="read"))
    terminal, session = open_editor(sandbox, reads=False)
    try:
        submit(terminal, session)
        result, asked = terminal.until("tool.result")
        assert result["result"] == DISK and asked == []
    finally:
        terminal.close()
