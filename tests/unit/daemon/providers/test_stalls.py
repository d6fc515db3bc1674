"""Silent servers (issue 10 item 12) over httpx.MockTransport, with tiny limits.

A server that never answers, one that sends headers and then nothing, one that
stops in the middle: each fails with a `ModelTimeout` naming the limit and the
setting that raises it. A slow but steady answer is not cut. While nothing has
come, the sink hears how long it has waited. A silence is asked again once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from coding_harness.daemon.agent.model_errors import ModelError, ModelTimeout
from coding_harness.daemon.agent.seams import JSONObject, ModelReply, StreamSink
from coding_harness.daemon.config.loader import load_config
from coding_harness.daemon.config.profiles import ProviderProfile, RetrySettings, StallLimits
from coding_harness.daemon.providers.local_model import LocalModel
from coding_harness.daemon.providers.openai_stream import OpenAIStreamingModel
from coding_harness.daemon.providers.retrying import MODEL_WAITING, RetryingModel, with_retries
from coding_harness.daemon.providers.stall import wait_interval
from tests.support.sinks import RecordingSink

ENDPOINT = "https://api.example.com/v1/chat/completions"
PAYLOAD: dict[str, Any] = {"model": "m-1", "messages": [{"role": "user", "content": "hi"}]}
TINY = StallLimits(first_byte=0.2, idle=0.2)
FOREVER = 30.0  # longer than any test runs: only a limit ends these waits


def chunk(text: str, finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


class Paced(httpx.AsyncByteStream):
    """A body whose pieces come after the given pauses (seconds before each)."""

    def __init__(self, pieces: list[tuple[float, bytes]]) -> None:
        self._pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for pause, piece in self._pieces:
            await asyncio.sleep(pause)
            yield piece


Handler = Callable[[httpx.Request], Awaitable[httpx.Response]]


def stream(pieces: list[tuple[float, bytes]]) -> Handler:
    async def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Paced(pieces)
        )

    return handle


async def never(request: httpx.Request) -> httpx.Response:
    await asyncio.sleep(FOREVER)
    raise AssertionError("the limit should have ended this wait")


class WaitingSink(RecordingSink):
    def __init__(self) -> None:
        super().__init__()
        self.waits: list[tuple[float, bool]] = []
        self.heard = asyncio.Event()

    def waiting(self, seconds: float, done: bool) -> None:
        self.waits.append((seconds, done))
        self.heard.set()


def profile(limits: StallLimits = TINY, kind: str = "openai") -> ProviderProfile:
    return ProviderProfile(
        name="cloud",
        type="mlx" if kind == "mlx" else "openai",
        endpoint=ENDPOINT,
        model="m-1",
        timeouts=limits,
    )


def ask(handler: Handler, sink: StreamSink | None = None, *, kind: str = "openai") -> ModelReply:
    async def go() -> ModelReply:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            chosen = LocalModel if kind == "mlx" else OpenAIStreamingModel
            model = chosen(profile(kind=kind), client, None)
            return await model.complete(dict(PAYLOAD), sink or RecordingSink())

    return asyncio.run(go())


def stalled(handler: Handler, *, kind: str = "openai") -> ModelTimeout:
    with pytest.raises(ModelTimeout) as caught:
        ask(handler, kind=kind)
    return caught.value


@pytest.mark.parametrize("kind", ["openai", "mlx"])
def test_a_server_that_never_answers_fails_at_the_first_byte_limit(kind: str) -> None:
    error = stalled(never, kind=kind)
    assert f"no answer from the model server at {ENDPOINT} (nothing for 0.2 s)" in error.message
    assert "providers.cloud.timeouts.first_byte" in error.message
    assert error.retryable


def test_headers_then_silence_is_still_waiting_for_the_first_byte() -> None:
    error = stalled(stream([(FOREVER, chunk("never"))]))
    assert "timeouts.first_byte" in error.message


def test_silence_in_the_middle_of_an_answer_fails_at_the_idle_limit() -> None:
    error = stalled(stream([(0, chunk("Hel")), (FOREVER, chunk("lo"))]))
    assert "went silent in the middle of the answer (nothing for 0.2 s)" in error.message
    assert "providers.cloud.timeouts.idle" in error.message


def test_a_slow_but_steady_answer_is_not_cut() -> None:
    pieces = [(0.05, chunk(str(n))) for n in range(8)] + [(0.05, chunk("", "stop"))]
    reply = ask(stream([*pieces, (0, b"data: [DONE]\n\n")]))
    assert reply.content == "01234567"  # 0.45 s in all, past the 0.2 s first-byte limit


def test_the_sink_hears_how_long_it_waited_then_that_the_answer_started() -> None:
    sink = WaitingSink()
    body = [(0.15, chunk("ok", "stop")), (0, b"data: [DONE]\n\n")]
    reply = ask(stream(body), sink)
    assert reply.content == "ok"
    assert sink.waits, "no wait was reported"
    assert [done for _, done in sink.waits] == [False] * (len(sink.waits) - 1) + [True]
    seconds = [s for s, _ in sink.waits]
    assert seconds == sorted(seconds) and seconds[0] > 0


def test_a_quick_answer_reports_no_wait() -> None:
    sink = WaitingSink()
    ask(stream([(0, chunk("ok", "stop")), (0, b"data: [DONE]\n\n")]), sink)
    assert sink.waits == []


def test_cancelling_a_waiting_request_stops_it_and_its_reports() -> None:
    sink = WaitingSink()

    async def go() -> int:
        transport = httpx.MockTransport(never)
        async with httpx.AsyncClient(transport=transport) as client:
            slow = profile(StallLimits(first_byte=2, idle=2))
            model = OpenAIStreamingModel(slow, client, None)
            task = asyncio.create_task(model.complete(dict(PAYLOAD), sink))
            await sink.heard.wait()  # a report every 0.5 s: the first one, then cancel
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            count = len(sink.waits)
            await asyncio.sleep(0.1)
            return count

    assert asyncio.run(asyncio.wait_for(go(), 20)) == len(sink.waits) == 1


def test_waits_are_reported_every_5_s_or_more_often_under_a_small_limit() -> None:
    assert wait_interval(120) == 5 and wait_interval(300) == 5
    assert wait_interval(2) == 0.5 and wait_interval(0.001) == 0.05


class Silent:
    """A model that always goes silent; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    @property
    def label(self) -> str:
        return "silent"

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply:
        self.calls += 1
        raise ModelTimeout("no answer from the model server", endpoint=ENDPOINT)


def test_a_silence_is_asked_again_once_at_most() -> None:
    silent, notices = Silent(), []

    async def no_wait(_: float) -> None:
        pass

    model = RetryingModel(silent, notices.append, settings=RetrySettings(attempts=6), sleep=no_wait)
    with pytest.raises(ModelError) as caught:
        asyncio.run(model.complete(PAYLOAD, RecordingSink()))
    assert silent.calls == 2 and len(notices) == 1
    assert "went silent" in notices[0] and "(attempt 2 of 2)" in notices[0]
    assert "gave up after 2 attempts" in caught.value.message


class Events:
    def __init__(self) -> None:
        self.events: list[tuple[str, JSONObject]] = []

    def emit(self, kind: str, data: JSONObject) -> None:
        self.events.append((kind, data))


def test_with_retries_publishes_waits_as_model_waiting_events() -> None:
    events = Events()
    body = [(0.15, chunk("ok", "stop")), (0, b"data: [DONE]\n\n")]

    async def go() -> ModelReply:
        transport = httpx.MockTransport(stream(body))
        async with httpx.AsyncClient(transport=transport) as client:
            model = with_retries(
                OpenAIStreamingModel(profile(), client, None), RetrySettings(), events
            )
            return await model.complete(dict(PAYLOAD), RecordingSink())

    assert asyncio.run(go()).content == "ok"
    waits = [data for kind, data in events.events if kind == MODEL_WAITING]
    assert waits and waits[-1]["done"] is True
    assert all(isinstance(w["seconds"], float) for w in waits)


def write_profile(tmp_path: Path, **more: Any) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    providers = {
        "remote": {"endpoint": ENDPOINT, "model": "m"},
        "here": {"endpoint": "http://127.0.0.1:8080/v1/chat/completions", "model": "m"},
        "whole": {"type": "mlx", "endpoint": "http://gpu.lan:8080/v1", "model": "m"},
        **more,
    }
    (home / ".coding_harness.json").write_text(json.dumps({"providers": providers}))
    return home


def test_limits_default_by_where_the_model_runs_and_are_set_per_profile(tmp_path: Path) -> None:
    tuned = {"endpoint": ENDPOINT, "model": "m", "timeouts": {"first_byte": 30}}
    config = load_config(write_profile(tmp_path, tuned=tuned), tmp_path)
    assert config.problems == ()
    assert config.profile("remote").timeouts == StallLimits(first_byte=120, idle=60)
    assert config.profile("here").timeouts == StallLimits(first_byte=300, idle=60)
    assert config.profile("whole").timeouts == StallLimits(first_byte=300, idle=60)
    assert config.profile("tuned").timeouts == StallLimits(first_byte=30, idle=60)


@pytest.mark.parametrize(
    ("timeouts", "words"),
    [
        ({"first_byte": 0}, "timeouts.first_byte must be a number of seconds above 0"),
        ({"idle": "60"}, "timeouts.idle must be a number"),
        ({"read": 5}, "timeouts.read is not a timeout (first_byte, idle)"),
        (30, "timeouts must be an object"),
    ],
)
def test_bad_limits_name_the_key(tmp_path: Path, timeouts: Any, words: str) -> None:
    bad = {"endpoint": ENDPOINT, "model": "m", "timeouts": timeouts}
    config = load_config(write_profile(tmp_path, bad=bad), tmp_path)
    [problem] = config.problems
    assert f"providers.bad.{words}" in problem and "skipped" in problem
