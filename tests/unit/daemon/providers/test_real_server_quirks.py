"""What real OpenAI-compatible servers nobody here wrote demand of a request.

llama-cpp-python's server rejects an assistant message whose `content` is null
(HTTP 500, a pydantic validation error) and cannot stream a request with tools
(it answers 200 and aborts the body before its first event). Driven through
httpx.MockTransport with the real provider code.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from coding_harness.daemon.agent.history import check_messages
from coding_harness.daemon.agent.model_errors import (
    ModelBadRequest,
    ModelContextExceeded,
    ModelError,
    ModelServerError,
    ModelStreamCut,
    ModelStreamEmpty,
)
from coding_harness.daemon.agent.seams import Model, ModelReply, ToolCall
from coding_harness.daemon.providers.errors import error_from_response
from coding_harness.daemon.providers.local_model import LocalModel
from coding_harness.daemon.providers.openai_stream import OpenAIStreamingModel
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.providers.retrying import RetryingModel
from tests.support.mock_http import (
    ENDPOINT,
    KEY,
    LOCAL_ENDPOINT,
    PAYLOAD,
    Pieces,
    Server,
    delta,
    event_stream,
    failing,
    fixture_text,
    profile,
    respond,
    run_pool,
    sse,
)
from tests.support.sinks import RecordingSink

CALL = ToolCall(id="call_0", name="read_file", arguments='{"path": "a.py"}')
# The shape of llama-cpp-python's answer to `"content": null` on an assistant message.
PYDANTIC_500 = json.dumps(
    {
        "error": {
            "message": "1 validation error for CreateChatCompletionRequest\nmessages.2.content\n"
            "  Input should be a valid string [type=string_type, input_value=None,"
            " input_type=NoneType]",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    }
)
ANSWER = {"choices": [{"index": 0, "message": {"content": "ok"}, "finish_reason": "stop"}]}


def history_with_null_content() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "read a.py"},
        {"role": "assistant", "content": None, "tool_calls": [CALL.to_wire()]},
        {"role": "tool", "tool_call_id": "call_0", "name": "read_file", "content": "x = 1"},
        {"role": "assistant", "tool_calls": [CALL.to_wire()]},
        {"role": "tool", "tool_call_id": "call_0", "name": "read_file", "content": "x = 1"},
    ]


# --- 1. content of an assistant message with tool calls ----------------------------------


def test_a_tool_call_message_keeps_an_empty_string_as_its_content() -> None:
    message = ModelReply(tool_calls=[CALL]).to_message()
    assert message["content"] == ""
    assert message["tool_calls"] == [CALL.to_wire()]
    assert ModelReply(content="Looking.", tool_calls=[CALL]).to_message()["content"] == "Looking."


def test_a_loaded_history_sends_empty_strings_not_null() -> None:
    checked = check_messages(history_with_null_content())
    assert [m["content"] for m in checked] == ["read a.py", "", "x = 1", "", "x = 1"]


@pytest.mark.parametrize("kind", ["openai", "mlx"])
def test_null_or_missing_content_goes_out_as_an_empty_string(kind: str) -> None:
    def answer(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=ANSWER)

    server = Server(answer)
    payload = {**PAYLOAD, "messages": history_with_null_content()}
    asyncio.run(_complete(server, kind, payload))
    sent = server.body()["messages"]
    assert [m["content"] for m in sent] == ["read a.py", "", "x = 1", "", "x = 1"]
    assert sent[1]["tool_calls"] == [CALL.to_wire()]
    # What the caller holds is not changed behind its back.
    assert payload["messages"][1]["content"] is None


async def _complete(
    server: Server, kind: str, payload: dict[str, Any], sink: RecordingSink | None = None
) -> ModelReply:
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        model: Model
        if kind == "mlx":
            model = LocalModel(profile("mlx", endpoint=LOCAL_ENDPOINT), client, KEY)
        else:
            model = OpenAIStreamingModel(profile(), client, KEY)
        return await model.complete(payload, sink or RecordingSink())


# --- 1. a request the server calls invalid is not asked again ----------------------------


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, PYDANTIC_500),
        (422, '{"detail": [{"loc": ["body", "messages"], "msg": "Field required"}]}'),
        (400, '{"error": {"message": "messages: invalid value", "type": "invalid_request"}}'),
        (500, '{"error": {"code": 500, "message": "Failed to parse tools", "type": "x"}}'),
    ],
)
def test_a_request_the_server_calls_invalid_is_a_bad_request(status: int, body: str) -> None:
    error = failing(respond(status, body))
    assert isinstance(error, ModelBadRequest)
    assert not error.retryable
    assert error.status == status
    assert "\n" not in error.message
    assert f"HTTP {status} from cloud" in error.message
    assert "refused the request as invalid" in error.message


def test_the_pydantic_error_is_one_readable_line() -> None:
    error = failing(respond(500, PYDANTIC_500))
    assert "messages.2.content Input should be a valid string" in error.message


@pytest.mark.parametrize(
    "name",
    [
        "llamacpp-500-failed-to-parse-tools.json",
        "llamacpp-500-failed-to-parse-tool-call-arguments.json",
        "openai-400-unsupported-parameter.json",
        "qwen-dashscope-400-invalid-tool-arguments.json",
    ],
)
def test_captured_invalid_request_bodies_are_bad_requests(name: str) -> None:
    status = 400 if "-400-" in name else 500
    error = failing(respond(status, fixture_text(name)))
    assert isinstance(error, ModelBadRequest) and not error.retryable


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, "Internal Server Error"),
        (502, '{"error": {"message": "upstream sent an invalid response"}}'),
        (503, '{"error": {"message": "model is loading"}}'),
    ],
)
def test_a_server_that_failed_on_its_own_is_still_retried(status: int, body: str) -> None:
    error = failing(respond(status, body))
    assert isinstance(error, ModelServerError) and error.retryable


def test_a_context_error_stays_a_context_error() -> None:
    error = failing(respond(400, fixture_text("llamacpp-400-exceed-context-size.json")))
    assert isinstance(error, ModelContextExceeded)


def test_a_validation_error_is_asked_once_not_four_times() -> None:
    server = Server(lambda _: httpx.Response(500, text=PYDANTIC_500))
    notices: list[str] = []

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
            inner = OpenAIStreamingModel(profile(), client, KEY)
            model = RetryingModel(inner, notices.append, sleep=_no_wait)
            await model.complete(dict(PAYLOAD), RecordingSink())

    with pytest.raises(ModelError) as caught:
        asyncio.run(go())
    assert isinstance(caught.value, ModelBadRequest)
    assert len(server.requests) == 1
    assert notices == []


async def _no_wait(_: float) -> None:
    return None


def test_error_from_response_needs_no_http() -> None:
    error = error_from_response(422, '{"detail": "Input should be a valid string"}', {}, profile())
    assert isinstance(error, ModelBadRequest)


def test_a_validation_error_inside_a_stream_is_not_retried() -> None:
    error_event = json.loads(PYDANTIC_500)["error"]
    body = f"event: error\ndata: {json.dumps(error_event)}\n\n".encode()
    error = failing(Server(lambda _: event_stream(body)))
    assert "Input should be a valid string" in error.message
    assert not error.retryable


# --- 2. a server that cannot stream a request with tools ---------------------------------

TOOL_ANSWER = {
    "choices": [
        {
            "index": 0,
            "message": {"content": None, "tool_calls": [CALL.to_wire()]},
            "finish_reason": "tool_calls",
        }
    ]
}
STREAMED_TEXT = sse(delta("streamed"), delta(finish="stop"))


def aborted_stream(*pieces: bytes) -> httpx.Response:
    """200 headers of an event stream, then `pieces`, then the connection drops."""
    dropped = httpx.RemoteProtocolError("peer closed connection without sending complete body")
    return httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=Pieces(pieces, dropped)
    )


def llama_cpp_python(request: httpx.Request) -> httpx.Response:
    """Streams plain answers, aborts streamed ones with tools, answers whole ones whole."""
    body = json.loads(request.content)
    if not body["stream"]:
        return httpx.Response(200, json=TOOL_ANSWER)
    if body.get("tools"):
        return aborted_stream()
    return event_stream(STREAMED_TEXT)


class NoticeSink(RecordingSink):
    def __init__(self) -> None:
        super().__init__()
        self.notices: list[str] = []

    def notice(self, message: str) -> None:
        self.notices.append(message)


def pool_calls(
    server: Server, payloads: list[dict[str, Any]]
) -> tuple[list[ModelReply], list[str]]:
    """Each payload through one pool's model for the `cloud` profile; (replies, notices)."""
    replies: list[ModelReply] = []
    sink = NoticeSink()

    async def body(pool: ProviderPool) -> None:
        for payload in payloads:
            model = pool.model_for(profile(), KEY)  # a new Model per turn, as the daemon does
            replies.append(await model.complete(payload, sink))

    run_pool(body, server)
    return replies, sink.notices


def sent_streams(server: Server) -> list[bool]:
    return [json.loads(request.content)["stream"] for request in server.requests]


def test_a_stream_with_tools_that_dies_before_its_first_event_falls_back_once() -> None:
    server = Server(llama_cpp_python)
    no_tools = {key: value for key, value in PAYLOAD.items() if key not in ("tools", "tool_choice")}
    replies, notices = pool_calls(server, [dict(PAYLOAD), dict(PAYLOAD), no_tools])
    assert [r.tool_calls for r in replies[:2]] == [[CALL], [CALL]]
    assert replies[2].content == "streamed"
    # Streamed and aborted, asked whole; then whole at once; a request without tools streams.
    assert sent_streams(server) == [True, False, False, True]
    whole = json.loads(server.requests[1].content)
    assert "stream_options" not in whole and whole["tools"] == PAYLOAD["tools"]
    (notice,) = notices
    assert ENDPOINT in notice and '"type": "mlx"' in notice and "'cloud'" in notice


def test_a_clean_but_empty_stream_with_tools_falls_back_too() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content)["stream"]:
            return event_stream(b": keep-alive\n\n")
        return httpx.Response(200, json=TOOL_ANSWER)

    server = Server(answer)
    replies, notices = pool_calls(server, [dict(PAYLOAD)])
    assert replies[0].tool_calls == [CALL] and sent_streams(server) == [True, False]
    assert len(notices) == 1


def test_without_tools_an_empty_stream_is_an_error_not_a_fallback() -> None:
    server = Server(lambda _: aborted_stream())
    no_tools = {"model": "m-1", "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(ModelStreamEmpty, match="ended before its first event"):
        pool_calls(server, [no_tools])
    assert sent_streams(server) == [True]


def test_a_stream_with_tools_that_dies_after_an_event_is_not_a_fallback() -> None:
    first = sse(delta(role="assistant", content=""), done=False)
    server = Server(lambda _: aborted_stream(first))
    with pytest.raises(ModelStreamCut) as caught:
        pool_calls(server, [dict(PAYLOAD)])
    assert not isinstance(caught.value, ModelStreamEmpty)
    assert sent_streams(server) == [True]


def test_the_fallback_notice_reaches_the_retrying_models_listeners() -> None:
    server = Server(llama_cpp_python)
    notices: list[str] = []

    async def body(pool: ProviderPool) -> None:
        model = RetryingModel(pool.model_for(profile(), KEY), notices.append, sleep=_no_wait)
        reply = await model.complete(dict(PAYLOAD), RecordingSink())
        assert reply.tool_calls == [CALL]

    run_pool(body, server)
    assert len(server.requests) == 2
    (notice,) = notices
    assert '"type": "mlx"' in notice and "retrying" not in notice


CONTEXT_REFUSAL = {
    "error": {
        "message": "This model's maximum context length is 1024 tokens. However, you requested"
        " 5000 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
    }
}


def test_a_prompt_over_the_context_is_not_taken_for_a_streaming_limit() -> None:
    """The stream dies at once and the whole request is refused for its length: the
    refusal is the error, and the next request with tools streams again."""

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body["messages"][-1]["content"] == "long":
            return aborted_stream() if body["stream"] else httpx.Response(400, json=CONTEXT_REFUSAL)
        return event_stream(STREAMED_TEXT)

    server = Server(answer)
    long = {**PAYLOAD, "messages": [{"role": "user", "content": "long"}]}
    short = {**PAYLOAD, "messages": [{"role": "user", "content": "short"}]}
    sink = NoticeSink()

    async def body(pool: ProviderPool) -> None:
        with pytest.raises(ModelContextExceeded):
            await pool.model_for(profile(), KEY).complete(long, sink)
        reply = await pool.model_for(profile(), KEY).complete(short, sink)
        assert reply.content == "streamed"

    run_pool(body, server)
    assert sent_streams(server) == [True, False, True] and sink.notices == []
