"""Clients that lose their connection mid-turn connect again and lose nothing.

A one-shot `harness` stopped with SIGSTOP while 30,000 events stream, a REPL
whose screen stops taking output, and a fake daemon that sends garbage or
hangs up (RELIABILITY 24, 77; issue 10 item 10).
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from coding_harness.client.args import OneShotOptions
from coding_harness.client.repl.repl import run_repl
from coding_harness.protocol.version import __version__
from tests.integration.conftest import Sandbox
from tests.support import waiting
from tests.support.big_answers import big_text, stream_in_large_pieces
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import client, run_harness

PROMPT = "list the numbers in calc.py"


def numbered(count: int) -> str:
    """`count` pieces of exactly 7 characters: the fake server streams one per delta."""
    return "".join(f"{i:06d} " for i in range(count))


def attached_clients(sandbox: Sandbox) -> int:
    with client(sandbox.socket, "observer") as observer:
        return int(observer.request("daemon.status")["attached_clients"])


def cut_off_after_the_turn(sandbox: Sandbox) -> Callable[[], bool]:
    """True once the session's turn ended and no connection is attached to it any more."""

    def check() -> bool:
        with client(sandbox.socket, "observer") as observer:
            sessions = observer.request("session.list")["sessions"]
            idle = bool(sessions) and sessions[0]["state"] == "idle" and sessions[0]["last_seq"]
            return bool(idle) and observer.request("daemon.status")["attached_clients"] == 0

    return check


def test_a_stopped_oneshot_reconnects_and_loses_nothing(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    """SIGSTOP while 30,000 events stream, SIGCONT once it was cut off (RELIABILITY 77)."""
    answer = numbered(30_000)
    model.add(Reply(content=answer, delay=1.0))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "coding_harness.client",
            "--output-format=stream-json",
            "-p",
            PROMPT,
        ],
        env=sandbox.env,
        cwd=sandbox.workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        waiting.wait_for(lambda: bool(model.requests), "the model request")
        os.kill(process.pid, signal.SIGSTOP)
        waiting.wait_for(
            cut_off_after_the_turn(sandbox), "the turn to end and the client to be cut off"
        )
    finally:
        os.kill(process.pid, signal.SIGCONT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err[-2000:]
    assert "reconnected" in err
    *lines, last = out.splitlines()
    events = [json.loads(line) for line in lines]
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # no gap, nothing twice
    assert "".join(e["data"]["text"] for e in events if e["kind"] == "text.delta") == answer
    assert json.loads(last)["reply"] == answer


class Gate(io.StringIO):
    """A text stream whose writes wait while the gate is shut: a screen that stops."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self.open = threading.Event()
        self.open.set()

    def write(self, text: str) -> int:
        self.open.wait()
        with self._lock:
            return super().write(text)

    def text(self) -> str:
        with self._lock:
            return self.getvalue()


def test_a_repl_that_fell_behind_reattaches_and_shows_everything_once(
    sandbox: Sandbox, model: FakeModelServer, repl_env
) -> None:
    answer = numbered(30_000)
    model.add(Reply(content=answer, delay=0.5))
    out, err = Gate(), Gate()
    codes: list[int] = []
    with create_pipe_input() as pipe:
        options = OneShotOptions(cwd=str(sandbox.workspace), plain=True, quiet=True)
        repl = threading.Thread(
            target=lambda: codes.append(
                run_repl(options, pt_input=pipe, pt_output=DummyOutput(), out=out, err=err)
            ),
            daemon=True,
        )
        repl.start()
        try:
            waiting.wait_for(lambda: attached_clients(sandbox) == 1, "the REPL to attach")
            pipe.send_text(PROMPT + "\n")
            waiting.wait_for(lambda: "000000 " in out.text(), "the first piece of the answer")
            out.open.clear()  # the screen stops: the REPL stops reading its events
            waiting.wait_for(
                cut_off_after_the_turn(sandbox), "the turn to end and the REPL to be cut off"
            )
        finally:
            out.open.set()
        # The notices about the reconnection end the reply's line on the screen.
        waiting.wait_for(lambda: "029999 " in out.text(), "the end of the answer")
        pipe.send_text("/quit\n")
        repl.join(15)
    assert codes == [0], err.text()[-2000:]
    shown = [int(piece) for piece in out.text().split() if piece.isdigit()]
    assert shown == list(range(30_000))  # each once: the replay starts where it stopped
    assert "reconnected" in err.text()


class FakeDaemon:
    """Answers a one-shot client's opening requests on a Unix socket, then misbehaves:
    sends `ending` after the first event, and with `hang_up` closes and goes away."""

    def __init__(self, path: Path, cwd: Path, ending: bytes, *, hang_up: bool) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path, self.cwd, self.ending, self.hang_up = path, cwd, ending, hang_up
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(4)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _answer(self, method: str) -> Any:
        return {
            "initialize": {
                "daemon": {"name": "harnessd", "version": __version__, "pid": 1},
                "protocol": 1,
                "client_id": "c1",
                "key_env": [],
                "notice": None,
            },
            "session.create": {
                "session": "s1",
                "cwd": str(self.cwd),
                "provider": "fake",
                "model": "m",
                "endpoint": "http://127.0.0.1:9/v1/chat/completions",
                "key_env": [],
                "config_problems": [],
            },
            "session.attach": {"session": "s1", "last_seq": 0, "replayed": 0, "missed": 0},
            "session.submit": {"turn": "t1", "queued": False},
        }.get(method, {})

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn, conn.makefile("rb") as lines:
            for line in lines:
                request = json.loads(line)
                answer = {"jsonrpc": "2.0", "id": request["id"]}
                answer["result"] = self._answer(request["method"])
                conn.sendall(json.dumps(answer).encode() + b"\n")
                if request["method"] == "session.submit":
                    break
            event = {"session": "s1", "seq": 1, "kind": "turn.started", "data": {"turn": "t1"}}
            note = {"jsonrpc": "2.0", "method": "event", "params": event}
            conn.sendall(json.dumps(note).encode() + b"\n" + self.ending)
            if self.hang_up:
                self.close()
                return
            self._closed.wait(30)  # until the client gives up on its own

    def join(self) -> None:
        self._thread.join(timeout=5)

    def close(self) -> None:
        self._closed.set()
        self.listener.close()
        self.path.unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("ending", "hang_up", "said"),
    [
        (b"this is not JSON\n", False, "protocol error from daemon: invalid JSON"),
        (b'{"jsonrpc":"2.0","method":"ev', True, "daemon connection lost"),
    ],
)
def test_a_daemon_that_misbehaves_mid_turn_is_a_clear_exit_4(
    sandbox: Sandbox, ending: bytes, hang_up: bool, said: str
) -> None:
    fake = FakeDaemon(sandbox.socket, sandbox.workspace, ending, hang_up=hang_up)
    try:
        result = run_harness(["-p", PROMPT], env=sandbox.env, cwd=sandbox.workspace, timeout=30)
    finally:
        fake.close()
        fake.join()
    assert result.returncode == 4
    assert said in result.stderr and "Traceback" not in result.stderr
    if hang_up:  # it tried to attach again with since_seq before giving up
        assert "reconnecting" in result.stderr and "could not reconnect" in result.stderr


def test_attaching_a_repl_shows_the_end_of_a_history_over_the_message_limit(
    sandbox: Sandbox, model: FakeModelServer, repl_env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 17 MiB answer in the history: attaching replays the last turns, whole (item 8)."""
    stream_in_large_pieces(monkeypatch)
    answer = big_text(17 * 1024 * 1024)
    model.add(*(Reply(content=f"answer {i}") for i in range(10)), Reply(content=answer))
    with client(sandbox.socket) as control:
        session = control.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
        control.request("session.attach", {"session": session})
        for text in [*(f"question {i}" for i in range(10)), "the big one"]:
            params = {"session": session, "text": text, "options": {"route": "coding"}}
            control.request("session.submit", params)
        waiting.wait_for(
            lambda: control.request("session.list")["sessions"][0]["messages"] == 22, "22"
        )
    out, err = Gate(), Gate()
    with create_pipe_input() as pipe:
        pipe.send_text("/quit\n")
        options = OneShotOptions(cwd=str(sandbox.workspace), plain=True, session=session)
        code = run_repl(options, pt_input=pipe, pt_output=DummyOutput(), out=out, err=err)
    assert code == 0, err.text()[-2000:]
    shown = err.text()
    assert "(1 earlier turn not shown)" in shown  # of 11: question 0 and its answer
    assert "> question 0\n" not in shown and "> question 1\n" in shown
    assert answer[-1000:] in out.text()  # replayed as it streamed live: the reply on stdout


def test_save_writes_a_history_larger_than_one_page_whole(
    sandbox: Sandbox, model: FakeModelServer, repl_env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/save` reads every page of `session.history`, not only the first 4 MiB."""
    stream_in_large_pieces(monkeypatch)
    answer = big_text(6 * 1024 * 1024)
    model.add(Reply(content=answer))
    with client(sandbox.socket) as control:
        session = control.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
        control.request("session.attach", {"session": session})
        params = {"session": session, "text": "the big one", "options": {"route": "coding"}}
        control.request("session.submit", params)
        waiting.wait_for(
            lambda: control.request("session.list")["sessions"][0]["messages"] == 2, "2"
        )
    saved = sandbox.root / "saved.json"
    out, err = Gate(), Gate()
    with create_pipe_input() as pipe:
        pipe.send_text(f"/save {saved}\n/quit\n")
        options = OneShotOptions(cwd=str(sandbox.workspace), plain=True, session=session)
        code = run_repl(options, pt_input=pipe, pt_output=DummyOutput(), out=out, err=err)
    assert code == 0, err.text()[-2000:]
    messages = json.loads(saved.read_text())["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[-1]["content"] == answer
