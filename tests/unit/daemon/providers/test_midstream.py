"""Answers that fail half-way, over real HTTP to the fake model server: a 200 stream that
reports an `error` event or an `{"error": ...}` chunk, or is cut, after some chunks.

Asked again whole when nothing was shown (a half-streamed tool call is dropped, no tool
runs from it); an error, never a quietly partial answer, once text was shown.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from coding_harness.daemon.agent.loop import AgentLoop, LoopSettings
from coding_harness.daemon.agent.model_errors import (
    ModelBadResponse,
    ModelContextExceeded,
    ModelError,
    ModelStreamCut,
)
from coding_harness.daemon.agent.seams import JSONObject, ModelReply, ToolCall, Usage
from coding_harness.daemon.config.profiles import ProviderProfile, RetrySettings
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.providers.retrying import RetryingModel
from tests.support.fake_model_server import FakeModelServer, Fault, Reply, tool_call
from tests.support.sinks import RecordingSink

FAST = RetrySettings(attempts=3, base_delay=0.01, max_delay=0.02)
PAYLOAD: JSONObject = {"model": "fake", "messages": [{"role": "user", "content": "go"}]}
OVERLOADED = json.dumps({"error": {"message": "Overloaded", "type": "overloaded_error"}})
TEXT = Reply(content="Hello there, friend", prompt_tokens=5, completion_tokens=5)
CALL = Reply(tool_calls=[tool_call("read_file", path="calc.py")])
# stream_chunks(TEXT): role (empty content), "Hello t", "here, f", "riend", finish, usage.
NOTHING_SHOWN, TEXT_SHOWN = 1, 2


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as running:
        yield running


def ask(server: FakeModelServer) -> tuple[ModelReply | ModelError, list[str], RecordingSink]:
    """One model call through a real pool, retried; returns the reply or the error."""
    notices: list[str] = []
    sink = RecordingSink()
    profile = ProviderProfile(name="fake", type="openai", endpoint=server.endpoint, model="fake")

    async def go() -> ModelReply | ModelError:
        pool = ProviderPool()
        model = RetryingModel(pool.model_for(profile, None), notices.append, settings=FAST)
        try:
            return await model.complete(PAYLOAD, sink)
        except ModelError as exc:
            return exc
        finally:
            await pool.aclose()

    return asyncio.run(go()), notices, sink


def test_an_error_event_before_any_text_is_asked_again(server: FakeModelServer) -> None:
    server.add(Fault(partial=TEXT, after_chunks=NOTHING_SHOWN, error_event=OVERLOADED), TEXT)
    result, notices, sink = ask(server)
    assert isinstance(result, ModelReply) and result.content == TEXT.content
    assert "".join(sink.text) == TEXT.content  # shown once
    (notice,) = notices
    assert f"{server.endpoint} reported an error before any of the answer was shown" in notice
    assert "(attempt 2 of 3)" in notice
    assert server.requests[0] == server.requests[1]


def test_an_error_chunk_before_any_text_is_asked_again(server: FakeModelServer) -> None:
    busy = {"message": "upstream overloaded", "code": 502}
    server.add(Fault(partial=TEXT, after_chunks=NOTHING_SHOWN, error_chunk=busy), TEXT)
    result, notices, _ = ask(server)
    assert isinstance(result, ModelReply) and result.content == TEXT.content
    assert len(notices) == 1 and len(server.requests) == 2


def test_a_half_streamed_tool_call_is_dropped_and_asked_again(server: FakeModelServer) -> None:
    cut_call = Reply(tool_calls=[tool_call("propose_edit", path="a.py", old="x" * 80, new="y")])
    server.add(Fault(partial=cut_call, after_chunks=4), CALL)  # cut inside the arguments
    result, notices, sink = ask(server)
    assert isinstance(result, ModelReply)
    [call] = result.tool_calls
    assert (call.name, json.loads(call.arguments)) == ("read_file", {"path": "calc.py"})
    assert "cut off before any of it was shown" in notices[0]
    assert sink.text == []


def test_an_error_event_after_text_is_an_error_not_a_partial_answer(
    server: FakeModelServer,
) -> None:
    server.add(Fault(partial=TEXT, after_chunks=TEXT_SHOWN, error_event=OVERLOADED), TEXT)
    result, notices, sink = ask(server)
    assert isinstance(result, ModelBadResponse)
    assert "Overloaded" in result.message and "already shown" in result.message
    assert notices == [] and len(server.requests) == 1
    assert sink.text == ["Hello t"]


def test_a_cut_after_text_is_an_error(server: FakeModelServer) -> None:
    server.add(Fault(partial=TEXT, after_chunks=TEXT_SHOWN + 1), TEXT)
    result, notices, _ = ask(server)
    assert isinstance(result, ModelStreamCut)
    assert server.endpoint in result.message and "already shown" in result.message
    assert notices == [] and len(server.requests) == 1


def test_a_context_error_event_is_not_asked_again(server: FakeModelServer) -> None:
    too_long = json.dumps({"error": {"message": "maximum context length is 8192 tokens"}})
    server.add(Fault(partial=TEXT, after_chunks=0, error_event=too_long), TEXT)
    result, notices, _ = ask(server)
    assert isinstance(result, ModelContextExceeded) and "compact" in result.message
    assert notices == [] and len(server.requests) == 1


def test_failing_every_time_gives_up_with_the_count(server: FakeModelServer) -> None:
    fault = Fault(partial=CALL, after_chunks=2, error_event=OVERLOADED)
    server.add(fault, fault, fault)
    result, notices, _ = ask(server)
    assert isinstance(result, ModelBadResponse)
    assert "gave up after 3 attempts" in result.message
    assert len(notices) == 2 and len(server.requests) == 3


def test_usage_of_a_failed_attempt_is_not_counted(server: FakeModelServer) -> None:
    wasted = Reply(content="", prompt_tokens=900, completion_tokens=900)
    # role, finish, usage: the usage chunk arrives, then the error.
    server.add(Fault(partial=wasted, after_chunks=3, error_event=OVERLOADED), TEXT)
    result, _, _ = ask(server)
    assert isinstance(result, ModelReply)
    assert result.usage == Usage(prompt_tokens=5, completion_tokens=5)


class CountingTools:
    def __init__(self) -> None:
        self.ran: list[str] = []

    def schemas(self) -> list[JSONObject]:
        return [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]

    async def execute(self, call: ToolCall) -> str:
        self.ran.append(call.name)
        return "def add(a, b):\n    return a + b\n"


class Events:
    def __init__(self) -> None:
        self.kinds: list[str] = []

    def emit(self, kind: str, data: JSONObject) -> object:
        self.kinds.append(kind)
        return None


def test_in_a_turn_the_request_is_retried_and_no_tool_runs_twice(
    server: FakeModelServer,
) -> None:
    server.add(
        CALL,
        Fault(partial=CALL, after_chunks=3, error_event=OVERLOADED),
        Reply(content="All done."),
    )
    tools, events, usage, notices = CountingTools(), Events(), list[Usage](), list[str]()
    profile = ProviderProfile(name="fake", type="openai", endpoint=server.endpoint, model="fake")
    messages: list[JSONObject] = [{"role": "user", "content": "fix calc.py"}]

    async def go() -> Any:
        pool = ProviderPool()
        loop = AgentLoop(
            model=RetryingModel(pool.model_for(profile, None), notices.append, settings=FAST),
            tools=tools,
            events=events,
            settings=LoopSettings(model_id="fake", generation={}, stall_limit=0),
            on_usage=usage.append,
        )
        try:
            return await loop.run(messages)
        finally:
            await pool.aclose()

    result = asyncio.run(go())
    assert result.reply == "All done."
    assert tools.ran == ["read_file"]
    assert len(server.requests) == 3
    assert server.requests[1]["messages"] == server.requests[2]["messages"]
    assert len(usage) == 2  # the two answers that succeeded
    assert len(notices) == 1
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
