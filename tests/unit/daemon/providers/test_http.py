"""OpenAIStreamingModel, LocalModel and ProviderPool over httpx.MockTransport.

Each test drives the real provider code through httpx with a scripted server:
streamed bodies split at awkward byte boundaries, error statuses with real
captured bodies (read from ../shared/fixtures/sse when present), cut streams,
dropped connections and refused connects.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket

import httpx
import pytest

from coding_harness.daemon.agent.model_errors import (
    ModelBadRequest,
    ModelBadResponse,
    ModelContextExceeded,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelServerError,
    ModelStreamCut,
    ModelTimeout,
    ModelUnavailable,
)
from coding_harness.daemon.agent.seams import ToolCall, Usage
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.errors import error_from_response, parse_retry_after
from coding_harness.daemon.providers.local_model import LocalModel
from coding_harness.daemon.providers.model_gate import GatedModel
from coding_harness.daemon.providers.openai_stream import OpenAIStreamingModel
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.providers.stream_fallback import StreamOrWhole
from tests.support.mock_http import (
    ENDPOINT,
    KEY,
    LOCAL_ENDPOINT,
    PAYLOAD,
    Server,
    call,
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

# --- streaming: the happy path ---------------------------------------------------------

TOOL_STREAM = sse(
    delta(role="assistant", content=None),
    delta("Let me look — é"),
    delta(" first."),
    delta(
        tool_calls=[
            {"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_file"}}
        ]
    ),
    delta(tool_calls=[{"index": 0, "function": {"arguments": '{"path": '}}]),
    delta(tool_calls=[{"index": 0, "function": {"arguments": '"a.py"}'}}]),
    delta(finish="tool_calls"),
    {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 9}},
)


@pytest.mark.parametrize("size", [1, 3, 7, 64, 100_000])
def test_streams_text_and_tool_call(size: int) -> None:
    server = Server(lambda _: event_stream(TOOL_STREAM, size))
    reply, sink = call(server)
    assert reply.content == "Let me look — é first."
    assert "".join(sink.text) == reply.content
    assert reply.tool_calls == [
        ToolCall(id="call_a", name="read_file", arguments='{"path": "a.py"}')
    ]
    assert reply.finish_reason == "tool_calls"
    assert reply.usage == Usage(prompt_tokens=12, completion_tokens=9)


def test_request_asks_for_a_stream_with_usage_and_adds_nothing_else() -> None:
    server = Server(lambda _: event_stream(TOOL_STREAM))
    call(server)
    [request] = server.requests
    assert request.method == "POST"
    assert str(request.url) == ENDPOINT
    assert server.body() == {**PAYLOAD, "stream": True, "stream_options": {"include_usage": True}}
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["accept"] == "text/event-stream"


def test_no_authorization_header_without_a_key() -> None:
    server = Server(lambda _: event_stream(TOOL_STREAM))
    call(server, key=None)
    assert "authorization" not in server.requests[0].headers


def test_streaming_timeouts_are_idle_not_total() -> None:
    server = Server(lambda _: event_stream(TOOL_STREAM))
    call(server)
    timeout = server.requests[0].extensions["timeout"]
    assert timeout["connect"] == 30.0
    assert timeout["read"] is None  # the first byte and the gaps are timed by StallWatch
    assert "total" not in timeout


def test_stream_with_finish_reason_but_no_done_is_complete() -> None:
    server = Server(lambda _: event_stream(sse(delta("ok"), delta(finish="stop"), done=False)))
    reply, _ = call(server)
    assert (reply.content, reply.finish_reason) == ("ok", "stop")


def test_done_without_finish_reason_is_complete() -> None:
    server = Server(lambda _: event_stream(sse(delta("ok"))))
    reply, _ = call(server)
    assert (reply.content, reply.finish_reason) == ("ok", None)


def test_server_that_ignores_stream_true_and_answers_json() -> None:
    body = {"choices": [{"index": 0, "message": {"content": "whole"}, "finish_reason": "stop"}]}
    server = Server(lambda _: httpx.Response(200, json=body))
    reply, sink = call(server)
    assert reply.content == "whole"
    assert sink.text == ["whole"]


# --- streaming: failures inside a 200 -----------------------------------------------------


def test_stream_cut_without_done_or_finish_reason() -> None:
    server = Server(lambda _: event_stream(sse(delta("partial an"), done=False)))
    error = failing(server)
    assert isinstance(error, ModelStreamCut)
    assert error.retryable
    assert ENDPOINT in error.message
    assert "[DONE]" in error.message


def test_connection_dropped_mid_stream_is_a_stream_cut() -> None:
    body = sse(delta("partial"), done=False)
    server = Server(lambda _: event_stream(body, fail=httpx.ReadError("connection reset by peer")))
    error = failing(server)
    assert isinstance(error, ModelStreamCut)
    assert "connection reset by peer" in error.message


def test_error_chunk_inside_a_200_stream() -> None:
    body = sse(delta("a"), {"error": {"message": "upstream overloaded", "code": 502}})
    error = failing(Server(lambda _: event_stream(body)))
    assert isinstance(error, ModelBadResponse)
    assert "upstream overloaded" in error.message
    assert ENDPOINT in error.message


def test_groq_error_event_fixture_over_http() -> None:
    body = fixture_text("groq-gpt-oss-stream-error-tool-use-failed.sse").encode()
    error = failing(Server(lambda _: event_stream(body, size=512)))
    assert isinstance(error, ModelBadResponse)
    assert "Tool call validation failed" in error.message


def test_error_event_with_plain_text_data() -> None:
    body = b"event: error\ndata: something broke\n\n"
    error = failing(Server(lambda _: event_stream(body)))
    assert isinstance(error, ModelBadResponse)
    assert "something broke" in error.message


def test_invalid_json_in_a_data_line() -> None:
    body = b'data: {"choices": [\n\n'
    error = failing(Server(lambda _: event_stream(body)))
    assert isinstance(error, ModelBadResponse)
    assert "invalid JSON" in error.message
    assert "'message' event" in error.message


def test_read_timeout_is_a_model_timeout() -> None:
    def stall(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    error = failing(Server(stall))
    assert isinstance(error, ModelTimeout)
    assert "went silent" in error.message
    assert error.retryable


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (httpx.WriteTimeout, "nothing sent within 60 s"),
        (httpx.PoolTimeout, "no free connection within 30 s"),
    ],
)
def test_other_timeouts_say_what_timed_out(exc: type[httpx.TimeoutException], words: str) -> None:
    def stall(request: httpx.Request) -> httpx.Response:
        raise exc("timed out", request=request)

    error = failing(Server(stall))
    assert isinstance(error, ModelTimeout)
    assert words in error.message


# --- HTTP statuses ------------------------------------------------------------------


def test_429_with_retry_after() -> None:
    body = fixture_text("openrouter-429-rate-limited.json")
    error = failing(respond(429, body, {"retry-after": "3"}))
    assert isinstance(error, ModelRateLimited)
    assert error.retry_after == 3.0
    assert error.retryable
    assert error.status == 429
    assert "HTTP 429" in error.message
    assert "temporarily rate-limited upstream" in error.message
    assert "retry after 3 s" in error.message


def test_429_quota_without_retry_after_is_not_retryable() -> None:
    body = json.dumps(
        {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    )
    error = failing(respond(429, body))
    assert isinstance(error, ModelRateLimited)
    assert error.retry_after is None
    assert not error.retryable
    assert "quota" in error.message


def test_400_unsupported_parameter() -> None:
    error = failing(respond(400, fixture_text("openai-400-unsupported-parameter.json")))
    assert type(error) is ModelBadRequest
    assert not error.retryable
    assert error.status == 400
    assert "HTTP 400" in error.message
    assert "'max_tokens' is not supported" in error.message


def test_401_names_the_key_variable() -> None:
    body = json.dumps(
        {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    )
    error = failing(respond(401, body))
    assert isinstance(error, ModelRequestRejected)
    assert "Incorrect API key provided" in error.message
    assert "$EXAMPLE_API_KEY" in error.message
    assert KEY not in error.message


def test_403_without_api_key_env_says_to_configure_one() -> None:
    bare = ProviderProfile(name="p", type="openai", endpoint=ENDPOINT, model="m")
    error = error_from_response(403, "forbidden", {}, bare)
    assert isinstance(error, ModelRequestRejected)
    assert "api_key_env" in error.message


def test_404_model_not_found() -> None:
    error = failing(respond(404, fixture_text("openai-404-model-not-found.json")))
    assert type(error) is ModelRequestRejected
    assert "does not exist" in error.message
    assert "'m-1'" in error.message


def test_500_is_a_retryable_server_error() -> None:
    error = failing(respond(500, "Internal Server Error", {"x-request-id": "req_42"}))
    assert isinstance(error, ModelServerError)
    assert error.retryable
    assert error.status == 500
    assert "req_42" in error.message


def test_500_that_failed_to_parse_our_request_is_not_retryable() -> None:
    body = fixture_text("llamacpp-500-failed-to-parse-tool-call-arguments.json")
    error = failing(respond(500, body))
    assert isinstance(error, ModelBadRequest)
    assert not error.retryable
    assert "Failed to parse tool call arguments" in error.message


def test_x_should_retry_header_is_honoured() -> None:
    error = failing(respond(503, "busy", {"x-should-retry": "false"}))
    assert isinstance(error, ModelServerError)
    assert not error.retryable


@pytest.mark.parametrize(
    "name",
    ["vllm-400-context-length-flat-error.json", "llamacpp-400-exceed-context-size.json"],
)
def test_context_length_400_fixtures(name: str) -> None:
    error = failing(respond(400, fixture_text(name)))
    assert isinstance(error, ModelContextExceeded)
    assert isinstance(error, ModelRequestRejected)
    assert not error.retryable
    assert "compact" in error.message


def test_openai_style_context_length_exceeded() -> None:
    body = json.dumps(
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens.",
                "code": "context_length_exceeded",
            }
        }
    )
    assert isinstance(failing(respond(400, body)), ModelContextExceeded)


def test_long_server_messages_are_cut_to_one_short_line() -> None:
    body = json.dumps({"error": {"message": "bad\n" + "x" * 5000}})
    error = failing(respond(400, body))
    assert "\n" not in error.message
    assert len(error.message) < 600
    assert "…" in error.message


def test_retry_after_as_http_date() -> None:
    headers = {"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}
    assert parse_retry_after(headers, now=1445412480.0) == 10.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"retry-after": "soon"}) is None


# --- connecting ---------------------------------------------------------------------


def test_connect_error_names_the_endpoint() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    error = failing(Server(refuse))
    assert isinstance(error, ModelUnavailable)
    assert error.retryable
    assert "\n" not in error.message
    assert error.message.startswith(f"no model server answers at {ENDPOINT} (connection refused)")


def test_nothing_listening_on_loopback_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}/v1/chat/completions"

    async def go() -> None:
        async with httpx.AsyncClient() as client:
            model = OpenAIStreamingModel(profile(endpoint=endpoint), client, None)
            await model.complete(dict(PAYLOAD), RecordingSink())

    with pytest.raises(ModelUnavailable) as caught:
        asyncio.run(go())
    assert caught.value.message == (
        f"no model server answers at {endpoint} (connection refused);"
        " start one or set an endpoint in ~/.coding_harness.json"
    )


def test_connect_timeout_is_unavailable() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out", request=request)

    error = failing(Server(slow))
    assert isinstance(error, ModelUnavailable)
    assert "within 30 s" in error.message


def test_api_key_is_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    call(Server(lambda _: event_stream(TOOL_STREAM)))
    failing(respond(401, "no"))
    assert KEY not in caplog.text


# --- the local, non-streaming type -----------------------------------------------------

LOCAL_ANSWER = {
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "Listing.",
                "tool_calls": [
                    {"id": "c1", "function": {"name": "list_dir", "arguments": {"path": "."}}}
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 7, "completion_tokens": 3},
}


def test_local_model_posts_without_streaming() -> None:
    server = Server(lambda _: httpx.Response(200, json=LOCAL_ANSWER))
    reply, sink = call(server, kind="mlx", key=None)
    assert server.body() == {**PAYLOAD, "stream": False}
    assert "authorization" not in server.requests[0].headers
    assert reply.content == "Listing."
    assert sink.text == ["Listing."]
    [tool] = reply.tool_calls
    assert (tool.id, tool.name, json.loads(tool.arguments)) == ("c1", "list_dir", {"path": "."})
    assert reply.usage == Usage(prompt_tokens=7, completion_tokens=3)


def test_local_model_timeouts() -> None:
    server = Server(lambda _: httpx.Response(200, json=LOCAL_ANSWER))
    call(server, kind="mlx")
    timeout = server.requests[0].extensions["timeout"]
    assert (timeout["connect"], timeout["read"]) == (30.0, None)  # reads: StallWatch


def test_local_model_without_content_sends_no_text() -> None:
    body = {"choices": [{"index": 0, "message": {"tool_calls": []}, "finish_reason": "stop"}]}
    reply, sink = call(Server(lambda _: httpx.Response(200, json=body)), kind="mlx")
    assert reply.content == ""
    assert sink.text == []


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (500, '{"error": {"message": "model crashed"}}', ModelServerError),
        (200, "<html>not json</html>", ModelBadResponse),
        (200, '{"choices": []}', ModelBadResponse),
        (200, "[1, 2]", ModelBadResponse),
    ],
)
def test_local_model_failures(status: int, body: str, kind: type[ModelError]) -> None:
    error = failing(respond(status, body), kind="mlx")
    assert isinstance(error, kind)
    assert LOCAL_ENDPOINT in error.message


def test_local_connect_refused_says_start_a_server() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("All connection attempts failed", request=request)

    error = failing(Server(refuse), kind="mlx")
    assert isinstance(error, ModelUnavailable)
    assert LOCAL_ENDPOINT in error.message
    assert "start one" in error.message


# --- the pool ------------------------------------------------------------------------


def test_pool_picks_the_model_for_the_profile_type() -> None:
    async def body(pool: ProviderPool) -> None:
        streaming = pool.model_for(profile(), KEY)
        assert isinstance(streaming, GatedModel)  # every request passes the profile's gate
        assert isinstance(streaming.inner, StreamOrWhole)
        assert streaming.label == "cloud:m-1"
        local = pool.model_for(profile("mlx", name="local", endpoint=LOCAL_ENDPOINT), None)
        assert isinstance(local, GatedModel) and isinstance(local.inner, LocalModel)
        assert local.label == "local:m-1"

    run_pool(body, Server(lambda _: event_stream(TOOL_STREAM)))


def test_pool_reuses_one_client_per_profile() -> None:
    server = Server(lambda _: event_stream(TOOL_STREAM))

    async def body(pool: ProviderPool) -> None:
        first = pool.client_for(profile())
        for _ in range(3):
            await pool.model_for(profile(), KEY).complete(dict(PAYLOAD), RecordingSink())
        assert pool.client_for(profile()) is first
        assert pool.client_count == 1
        other = pool.client_for(profile(name="other"))
        assert other is not first
        elsewhere = pool.client_for(profile(endpoint="https://other.example/v1/chat/completions"))
        assert elsewhere is not first
        assert pool.client_count == 3

    run_pool(body, server)
    assert len(server.requests) == 3


def test_pool_aclose_closes_clients_and_can_start_again() -> None:
    async def body(pool: ProviderPool) -> None:
        client = pool.client_for(profile())
        await pool.aclose()
        assert client.is_closed
        assert pool.client_count == 0
        assert pool.client_for(profile()) is not client

    run_pool(body, Server(lambda _: event_stream(TOOL_STREAM)))
