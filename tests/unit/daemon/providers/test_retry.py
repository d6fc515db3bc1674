"""RetryingModel with a scripted failing model and a fake sleep: what is retried, how long
it waits, what the user is told, and what is raised at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from coding_harness.daemon.agent.model_errors import (
    ModelContextExceeded,
    ModelError,
    ModelRateLimited,
    ModelRequestRejected,
    ModelServerError,
    ModelStreamCut,
    ModelTimeout,
    ModelUnavailable,
)
from coding_harness.daemon.agent.seams import JSONObject, ModelReply, StreamSink, Usage
from coding_harness.daemon.config.profiles import RetrySettings
from coding_harness.daemon.providers.retrying import RetryingModel, seconds, with_retries
from tests.support.sinks import RecordingSink
from tests.support.waiting import until

ENDPOINT = "https://api.example.com/v1/chat/completions"
OK = ModelReply(content="done", usage=Usage(prompt_tokens=100, completion_tokens=5))
Step = ModelReply | ModelError | Callable[[StreamSink], ModelError]


class ScriptedModel:
    """Plays `steps` in order: a reply is returned, an error raised (a callable
    gets the sink first, to stream something before failing)."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.calls = 0

    @property
    def label(self) -> str:
        return "scripted:m"

    async def complete(self, payload: JSONObject, sink: StreamSink) -> ModelReply:
        self.calls += 1
        step = self.steps.pop(0)
        if isinstance(step, ModelReply):
            sink.text_delta(step.content)
            return step
        raise step if isinstance(step, ModelError) else step(sink)


class FakeSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.waits.append(delay)


def server_error(status: int = 503) -> ModelServerError:
    return ModelServerError(
        f"HTTP {status} from p ({ENDPOINT}): busy", endpoint=ENDPOINT, status=status
    )


def run(
    steps: list[Step],
    settings: RetrySettings | None = None,
    rng: float = 1.0,
) -> tuple[ModelReply | ModelError, ScriptedModel, list[str], FakeSleep, RecordingSink]:
    model, notices, sleep, sink = ScriptedModel(steps), [], FakeSleep(), RecordingSink()
    retrying = RetryingModel(model, notices.append, settings=settings, sleep=sleep, rng=lambda: rng)
    try:
        result: ModelReply | ModelError = asyncio.run(retrying.complete({"model": "m"}, sink))
    except ModelError as exc:
        result = exc
    return result, model, notices, sleep, sink


def test_rate_limit_waits_retry_after_and_says_so_once() -> None:
    limited = ModelRateLimited("HTTP 429", endpoint=ENDPOINT, retry_after=3)
    result, model, notices, sleep, sink = run([limited, OK])
    assert result is OK and model.calls == 2
    assert sleep.waits == [3]
    assert notices == [f"rate limited by {ENDPOINT}, retrying in 3 s (attempt 2 of 4)"]
    assert sink.text == ["done"]


def test_server_errors_back_off_exponentially_with_full_jitter() -> None:
    settings = RetrySettings(attempts=5, base_delay=0.5, max_delay=8)
    result, model, notices, sleep, _ = run(
        [server_error(500), server_error(502), server_error(529), server_error(503), OK],
        settings,
        rng=1.0,
    )
    assert result is OK and model.calls == 5
    assert sleep.waits == [0.5, 1.0, 2.0, 4.0]
    assert notices[0] == f"HTTP 500 from {ENDPOINT}, retrying in 0.5 s (attempt 2 of 5)"
    assert notices[-1].endswith("(attempt 5 of 5)")
    _, _, _, half, _ = run([server_error(), server_error(), OK], settings, rng=0.25)
    assert half.waits == [0.125, 0.25]


def test_backoff_is_capped_at_max_delay() -> None:
    settings = RetrySettings(attempts=6, base_delay=1, max_delay=3)
    _, _, _, sleep, _ = run([server_error()] * 5 + [OK], settings)
    assert sleep.waits == [1, 2, 3, 3, 3]


def test_gives_up_after_the_attempts_with_the_status_in_one_line() -> None:
    result, model, notices, sleep, _ = run([server_error(503)] * 4)
    assert isinstance(result, ModelServerError) and model.calls == 4
    assert len(notices) == len(sleep.waits) == 3
    assert str(result) == f"HTTP 503 from p ({ENDPOINT}): busy (gave up after 4 attempts)"
    assert "\n" not in str(result)


@pytest.mark.parametrize(
    "error",
    [
        ModelRequestRejected("HTTP 400: bad request", endpoint=ENDPOINT, status=400),
        ModelRequestRejected("HTTP 401; check the API key in $KEY", endpoint=ENDPOINT, status=401),
        ModelRequestRejected("HTTP 403", endpoint=ENDPOINT, status=403),
        ModelRequestRejected("HTTP 404: model not found", endpoint=ENDPOINT, status=404),
        ModelContextExceeded("HTTP 400: compact it", endpoint=ENDPOINT, status=400),
        ModelRateLimited("HTTP 429: quota used up", endpoint=ENDPOINT, retryable=False),
        ModelServerError("HTTP 500, x-should-retry: false", endpoint=ENDPOINT, retryable=False),
    ],
)
def test_answers_that_will_not_change_are_not_retried(error: ModelError) -> None:
    message = str(error)
    result, model, notices, sleep, _ = run([error, OK])
    assert result is error and str(result) == message
    assert model.calls == 1 and notices == [] and sleep.waits == []


def test_a_retry_after_beyond_the_limit_is_reported_not_waited() -> None:
    limited = ModelRateLimited("HTTP 429; retry after 120 s", endpoint=ENDPOINT, retry_after=120)
    result, model, notices, sleep, _ = run([limited, OK], RetrySettings(max_retry_after=60))
    assert notices == []
    assert result is limited and model.calls == 1 and sleep.waits == []
    assert "longer than the 60 s a retry may wait" in str(result)


def test_retry_after_on_a_server_error_is_honoured() -> None:
    busy = ModelServerError("HTTP 503", endpoint=ENDPOINT, status=503, retry_after=2)
    _, _, _, sleep, _ = run([busy, OK])
    assert sleep.waits == [2]


def test_nothing_answering_is_retried_briefly_then_reported() -> None:
    down = ModelUnavailable(
        f"no model server answers at {ENDPOINT} (connection refused)", endpoint=ENDPOINT
    )
    settings = RetrySettings(attempts=8, base_delay=5, max_delay=30)
    result, model, notices, sleep, _ = run([down] * 8, settings)
    assert isinstance(result, ModelUnavailable) and model.calls == 3
    assert sleep.waits == [1.0, 1.0]
    assert str(result).startswith(f"no model server answers at {ENDPOINT} (connection refused)")
    assert notices[0].startswith(f"no model server answers at {ENDPOINT} yet, retrying")


def test_a_cut_stream_is_retried_when_nothing_was_shown() -> None:
    cut = ModelStreamCut("the stream ended early", endpoint=ENDPOINT)
    result, model, notices, _, sink = run([cut, OK])
    assert result is OK and model.calls == 2
    assert "cut off before any of it was shown" in notices[0]
    assert sink.text == ["done"]


def test_a_cut_stream_after_text_was_shown_is_an_error() -> None:
    def cut_after_text(sink: StreamSink) -> ModelError:
        sink.text_delta("Half an ans")
        return ModelStreamCut("the stream ended early", endpoint=ENDPOINT)

    result, model, notices, sleep, sink = run([cut_after_text, OK])
    assert isinstance(result, ModelStreamCut) and model.calls == 1
    assert notices == [] and sleep.waits == []
    assert "already shown" in str(result)
    assert sink.text == ["Half an ans"]


def test_silence_is_retried() -> None:
    silent = ModelTimeout(f"the model server at {ENDPOINT} went silent", endpoint=ENDPOINT)
    result, _, notices, _, _ = run([silent, OK])
    assert result is OK and notices[0].startswith(f"{ENDPOINT} went silent, retrying")


def test_one_attempt_means_no_retry() -> None:
    result, model, _, _, _ = run([server_error(), OK], RetrySettings(attempts=1))
    assert isinstance(result, ModelServerError) and model.calls == 1
    assert "gave up" not in str(result)


def test_usage_comes_from_the_reply_that_succeeded() -> None:
    result, _, _, _, _ = run([server_error(), server_error(), OK])
    assert isinstance(result, ModelReply) and result.usage == OK.usage


def test_cancelling_during_the_wait_stops_at_once() -> None:
    limited = ModelRateLimited("HTTP 429", endpoint=ENDPOINT, retry_after=30)
    model = ScriptedModel([limited, OK])
    retrying = RetryingModel(model, lambda _: None)  # the real asyncio.sleep

    async def go() -> float:
        task = asyncio.create_task(retrying.complete({}, RecordingSink()))
        await until(lambda: model.calls == 1, "the first call, then the wait")
        started = asyncio.get_running_loop().time()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return asyncio.get_running_loop().time() - started

    assert asyncio.run(go()) < 1
    assert model.calls == 1


def test_with_retries_emits_notice_events() -> None:
    events: list[tuple[str, JSONObject]] = []

    class Events:
        def emit(self, kind: str, data: JSONObject) -> None:
            events.append((kind, data))

    model = ScriptedModel([server_error(500), OK])
    wrapped = with_retries(model, RetrySettings(base_delay=0), Events())
    assert asyncio.run(wrapped.complete({}, RecordingSink())) is OK
    assert wrapped.label == "scripted:m"
    assert events == [
        ("notice", {"message": f"HTTP 500 from {ENDPOINT}, retrying in 0 s (attempt 2 of 4)"})
    ]


@pytest.mark.parametrize(
    ("delay", "text"), [(3, "3 s"), (0.4, "0.4 s"), (1.25, "1.2 s"), (12.4, "12 s")]
)
def test_waits_read_well(delay: float, text: str) -> None:
    assert seconds(delay) == text
