"""The debug log of raw model exchanges (`--debug`, issue 11 item 7): the recorder
redacts keys and secret values, keeps its folder 0700 and file 0600, writes one
JSON object a line; the provider clients report the request as sent and the
body as received, stream or whole, error or not."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

from coding_harness.daemon.agent.model_errors import ModelServerError
from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.providers.exchanges import ExchangeRecorder
from coding_harness.daemon.providers.local_model import LocalModel
from coding_harness.daemon.providers.openai_stream import OpenAIStreamingModel
from coding_harness.daemon.security.secrets import collect_secrets
from coding_harness.daemon.sessions.debug_log import DebugRecorder, DebugSwitches, debug_path
from tests.support.mock_http import KEY, PAYLOAD, Pieces, profile
from tests.support.sinks import RecordingSink

SECRET = "db-pass-5f1e9a0c77"
SSE = (
    b'data: {"choices":[{"index":0,"delta":{"content":"hel"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_recorder_redacts_the_key_and_secret_values(tmp_path: Path) -> None:
    secrets = collect_secrets(["FAKE_KEY"], {"FAKE_KEY": KEY, "DB_PASSWORD": SECRET})
    path = tmp_path / "debug" / "s1.jsonl"
    recorder = DebugRecorder(path, secrets, api_key=KEY)
    recorder.write({"kind": "request", "body": {"messages": [f"key {KEY} and {SECRET}"]}})
    recorder.write({"kind": "response", "body": f"echo {KEY}"})

    text = path.read_text()
    assert KEY not in text
    assert SECRET not in text
    first, second = _lines(path)
    assert first["body"]["messages"] == ["key [redacted] and [redacted]"]
    assert second == {"kind": "response", "body": "echo [redacted]"}


def test_a_recorder_marks_each_of_its_lines(tmp_path: Path) -> None:
    """The notes call's recorder: every line says it is the notes call of which turn."""
    path = tmp_path / "s.jsonl"
    marks: JSONObject = {"notes": True, "turn": "t-1"}
    recorder = DebugRecorder(path, collect_secrets([]), marks=marks)
    recorder.write({"kind": "request", "body": {}})
    recorder.write({"kind": "response", "body": ""})
    assert [(e["kind"], e["notes"], e["turn"]) for e in _lines(path)] == [
        ("request", True, "t-1"),
        ("response", True, "t-1"),
    ]


def test_a_short_key_is_redacted_too(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    DebugRecorder(path, collect_secrets([]), api_key="k-42").write({"body": "auth k-42"})
    assert _lines(path) == [{"body": "auth [redacted]"}]


def test_folder_and_file_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "debug"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    path = folder / "s.jsonl"
    path.write_text("")
    path.chmod(0o644)
    DebugRecorder(path, collect_secrets([])).write({"kind": "request"})
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_lines_are_appended_one_object_each(tmp_path: Path) -> None:
    path = tmp_path / "new" / "s.jsonl"
    recorder = DebugRecorder(path, collect_secrets([]))
    for n in range(3):
        recorder.write({"n": n, "text": "two\nlines"})
    assert [line["n"] for line in _lines(path)] == [0, 1, 2]
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_an_unwritable_log_does_not_raise(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    DebugRecorder(blocker / "s.jsonl", collect_secrets([])).write({"kind": "request"})


def test_switches_name_the_path_under_the_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    switches = DebugSwitches()
    assert switches.recorder("abc", collect_secrets([]), None) is None
    switches.set("abc", True)
    assert switches.path("abc") == tmp_path / "coding-harness" / "debug" / "abc.jsonl"
    assert switches.recorder("abc", collect_secrets([]), None) is not None
    switches.set("abc", False)
    assert switches.path("abc") is None
    assert debug_path("../x").parent == tmp_path / "coding-harness" / "debug"


class _Lines:
    def __init__(self) -> None:
        self.entries: list[JSONObject] = []

    def write(self, entry: JSONObject) -> None:
        self.entries.append(entry)


def _client(status: int, body: bytes, kind: str) -> httpx.AsyncClient:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": kind}, stream=Pieces([body]))

    return httpx.AsyncClient(transport=httpx.MockTransport(handle))


def _run(model: OpenAIStreamingModel | LocalModel) -> Any:
    return asyncio.run(model.complete(dict(PAYLOAD), RecordingSink()))


def test_a_stream_is_recorded_as_sent_and_as_received() -> None:
    lines = _Lines()
    recorder: ExchangeRecorder = lines
    client = _client(200, SSE, "text/event-stream")
    reply = _run(OpenAIStreamingModel(profile(), client, KEY, recorder))
    assert reply.content == "hello"
    request, response = lines.entries
    assert request["kind"] == "request"
    assert request["body"]["stream"] is True
    assert request["body"]["messages"] == PAYLOAD["messages"]
    assert request["headers"]["Authorization"] == "Bearer [redacted]"
    assert KEY not in json.dumps(lines.entries)
    assert response["status"] == 200
    assert response["body"] == SSE.decode()
    assert isinstance(response["elapsed_seconds"], float)
    assert "error" not in response


def test_a_whole_answer_and_an_error_are_recorded() -> None:
    answer = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}
    lines = _Lines()
    _run(
        LocalModel(
            profile("mlx"),
            _client(200, json.dumps(answer).encode(), "application/json"),
            KEY,
            lines,
        )
    )
    assert lines.entries[0]["body"]["stream"] is False
    assert json.loads(lines.entries[1]["body"]) == answer

    failed = _Lines()
    model = LocalModel(
        profile("mlx"), _client(503, b'{"error": "overloaded"}', "application/json"), KEY, failed
    )
    with pytest.raises(ModelServerError):
        _run(model)
    response = failed.entries[1]
    assert response["status"] == 503
    assert response["body"] == '{"error": "overloaded"}'
    assert response["error"].startswith("ModelServerError")


def test_the_log_rotates_to_dot_1_at_its_cap(tmp_path: Path) -> None:
    """At the cap the log becomes SESSION.jsonl.1 (replacing the one before) and a new
    one begins: a session never holds more than about twice the cap (issue 25, item 6)."""
    path = tmp_path / "debug" / "s1.jsonl"
    recorder = DebugRecorder(path, collect_secrets([]), max_bytes=200)
    for index in range(12):
        recorder.write({"kind": "request", "n": index, "pad": "x" * 40})
    rotated = path.with_name("s1.jsonl.1")
    assert path.stat().st_size <= 200 and rotated.stat().st_size <= 200
    numbers = [entry["n"] for entry in _lines(rotated) + _lines(path)]
    assert numbers == list(range(12 - len(numbers), 12))  # the newest, in order
    assert sorted(p.name for p in path.parent.iterdir()) == ["s1.jsonl", "s1.jsonl.1"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    recorder.write({"kind": "response", "body": "y" * 500})  # a line over the cap: whole
    assert _lines(path)[-1]["body"] == "y" * 500
