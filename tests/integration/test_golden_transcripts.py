"""The protocol section as golden transcripts, replayed against a real daemon.

Each file in tests/golden/ is one connection: `--> TEXT` sends TEXT and a
newline, `-->b LITERAL` sends the bytes of a Python bytes literal as they are
(invalid UTF-8, a message split over writes), `<-- JSON` is the next message
the daemon must send, compared as JSON, where the string "<any>" matches any
value. `//` starts a comment. After the last line nothing more may arrive. A
dependency upgrade that changes an error's code or words fails here
(RELIABILITY 26; go-ethereum's rpc/testdata does the same).

After a reviewed change of the wire, `GOLDEN_RECORD=1 pytest
tests/integration/test_golden_transcripts.py` rewrites the `<--` lines from
what the daemon answers now; read the diff before committing it.
"""

from __future__ import annotations

import ast
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Sandbox

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
ANY = "<any>"
# What differs from one daemon to the next in an initialize answer.
_VARYING = ("daemon", "client_id", "key_env", "notice")


def transcripts() -> list[Path]:
    return sorted(GOLDEN.glob("*.txt"))


class Wire:
    """A raw connection that reads whole messages, with a timeout."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(str(path))
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self, timeout: float = 10) -> Any:
        self.sock.settimeout(timeout)
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise AssertionError("the daemon closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def quiet(self) -> bool:
        """True when nothing more arrives within a short while."""
        try:
            return not self.buffer and not self.receive(timeout=0.3)
        except TimeoutError:
            return True


def matches(expected: Any, actual: Any) -> bool:
    if expected == ANY:
        return True
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            matches(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(map(matches, expected, actual))
    return bool(expected == actual) and type(expected) is type(actual)


def outgoing(line: str) -> bytes | None:
    if line.startswith("-->b "):
        value = ast.literal_eval(line[5:])
        assert isinstance(value, bytes)
        return value
    if line.startswith("--> "):
        return line[4:].encode() + b"\n"
    return None


def masked(message: Any) -> Any:
    """An answer as recorded: what varies between daemons becomes "<any>"."""
    result = message.get("result") if isinstance(message, dict) else None
    if isinstance(result, dict) and "client_id" in result:
        message = {**message, "result": {**result, **dict.fromkeys(_VARYING, ANY)}}
    return message


def replay(path: Path, socket_path: Path) -> None:
    wire = Wire(socket_path)
    with wire.sock:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            data = outgoing(line)
            if data is not None:
                wire.send(data)
            elif line.startswith("<-- "):
                expected, actual = json.loads(line[4:]), wire.receive()
                assert matches(expected, actual), f"{path.name}:{number}: got {actual}"
        assert wire.quiet(), f"{path.name}: the daemon sent more than the transcript says"


def record(path: Path, socket_path: Path) -> None:
    wire = Wire(socket_path)
    lines: list[str] = []
    with wire.sock:
        for line in path.read_text().splitlines():
            if line.startswith("<-- "):
                continue
            lines.append(line)
            data = outgoing(line)
            if data is None:
                continue
            wire.send(data)
            try:
                while True:
                    answer = wire.receive(timeout=0.5)
                    lines.append("<-- " + json.dumps(masked(answer), ensure_ascii=False))
            except TimeoutError:
                pass
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("path", transcripts(), ids=lambda path: path.stem)
def test_transcript(path: Path, sandbox: Sandbox, daemon) -> None:
    if os.environ.get("GOLDEN_RECORD"):
        record(path, sandbox.socket)
    replay(path, sandbox.socket)


def test_every_transcript_expects_answers() -> None:
    for path in transcripts():
        assert "\n<-- " in path.read_text(), f"{path.name} has no expected answers"
