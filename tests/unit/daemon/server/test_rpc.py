"""The JSON-RPC core without sockets: the specification's cases and ours."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from coding_harness.daemon.server.rpc import Endpoint, MethodTable
from coding_harness.protocol import errors


class Peer:
    def __init__(self) -> None:
        self.initialized = False
        self.label = "test-peer"
        self.overloaded = False


def make_endpoint() -> Endpoint:
    table = MethodTable()

    @table.register("initialize")
    async def initialize(
        peer: Peer, protocol: Any, client: Any = None, capabilities: Any = None
    ) -> dict[str, Any]:
        peer.initialized = True
        return {"protocol": protocol}

    @table.register("subtract")
    async def subtract(peer: Peer, minuend: int, subtrahend: int) -> int:
        return minuend - subtrahend

    @table.register("boom")
    async def boom(peer: Peer) -> None:
        raise RuntimeError("/home/user/.secret leaked?")

    @table.register("refuse")
    async def refuse(peer: Peer) -> None:
        raise errors.SessionNotFound("no session 'x'")

    return Endpoint(table, max_batch=10)


def call(endpoint: Endpoint, peer: Peer, raw: str | bytes) -> Any:
    data = raw.encode() if isinstance(raw, str) else raw
    return asyncio.run(endpoint.handle(data, peer))


@pytest.fixture
def ready() -> tuple[Endpoint, Peer]:
    endpoint, peer = make_endpoint(), Peer()
    call(endpoint, peer, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol":1}}')
    return endpoint, peer


def code(response: Any) -> int:
    return int(response["error"]["code"])


def test_spec_parse_error_and_invalid_request(ready: tuple[Endpoint, Peer]) -> None:
    endpoint, peer = ready
    parse = call(endpoint, peer, '{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]')
    assert code(parse) == -32700 and parse["id"] is None
    invalid = call(endpoint, peer, '{"jsonrpc":"2.0","method":1,"params":"bar"}')
    assert code(invalid) == -32600 and invalid["id"] is None


@pytest.mark.parametrize(
    "raw",
    [
        "1",
        "null",
        '"x"',
        '{"id":1}',
        '{"jsonrpc":"2.1","method":"subtract","id":1}',
        '{"jsonrpc":2.0,"method":"subtract","id":1}',
        '{"method":"subtract","id":1}',
        '{"jsonrpc":"2.0","method":"subtract","id":[]}',
        '{"jsonrpc":"2.0","method":"subtract","id":{}}',
        '{"jsonrpc":"2.0","method":"subtract","params":"bar","id":1}',
        '{"jsonrpc":"2.0","method":"subtract","id":1,"extra":true}',
    ],
)
def test_invalid_request_objects(ready: tuple[Endpoint, Peer], raw: str) -> None:
    endpoint, peer = ready
    response = call(endpoint, peer, raw)
    assert code(response) == -32600
    # The id is echoed when it is readable, null otherwise.
    parsed = json.loads(raw)
    expected = (
        parsed.get("id")
        if isinstance(parsed, dict) and isinstance(parsed.get("id"), int | str)
        else None
    )
    assert response["id"] == expected


def test_batches_follow_the_specification(ready: tuple[Endpoint, Peer]) -> None:
    endpoint, peer = ready
    assert code(call(endpoint, peer, "[]")) == -32600
    assert [code(r) for r in call(endpoint, peer, "[1,2,3]")] == [-32600] * 3
    assert [code(r) for r in call(endpoint, peer, "[null]")] == [-32600]
    mixed = call(
        endpoint,
        peer,
        '[{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"1"},'
        '{"jsonrpc":"2.0","method":"subtract","params":[1,1]},'
        '{"jsonrpc":"2.0","method":"nope","id":"5"},{"foo":"boo"}]',
    )
    assert mixed[0] == {"jsonrpc": "2.0", "result": 19, "id": "1"}
    assert code(mixed[1]) == -32601 and mixed[1]["id"] == "5"
    assert code(mixed[2]) == -32600
    only_notifications = '[{"jsonrpc":"2.0","method":"subtract","params":[1,1]}]'
    assert call(endpoint, peer, only_notifications) is None
    too_big = json.dumps(
        [{"jsonrpc": "2.0", "method": "subtract", "params": [1, 1], "id": i} for i in range(11)]
    )
    assert code(call(endpoint, peer, too_big)) == -32600


def test_params_errors_and_internal_errors_hide_details(ready: tuple[Endpoint, Peer]) -> None:
    endpoint, peer = ready
    bad = call(
        endpoint, peer, '{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1},"id":2}'
    )
    assert code(bad) == -32602 and "subtrahend" in json.dumps(bad)
    boom = call(endpoint, peer, '{"jsonrpc":"2.0","method":"boom","id":3}')
    assert code(boom) == -32603 and ".secret" not in json.dumps(boom)
    refused = call(endpoint, peer, '{"jsonrpc":"2.0","method":"refuse","id":4}')
    assert (
        code(refused) == errors.SessionNotFound.code
        and refused["error"]["message"] == "no session 'x'"
    )


def test_notifications_never_answered(ready: tuple[Endpoint, Peer]) -> None:
    endpoint, peer = ready
    assert call(endpoint, peer, '{"jsonrpc":"2.0","method":"nope"}') is None
    assert call(endpoint, peer, '{"jsonrpc":"2.0","method":"boom"}') is None


def test_everything_needs_initialize_first() -> None:
    endpoint, peer = make_endpoint(), Peer()
    early = call(endpoint, peer, '{"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":7}')
    assert code(early) == errors.NotInitialized.code and early["id"] == 7
    assert call(endpoint, peer, '{"jsonrpc":"2.0","method":"subtract","params":[1,1]}') is None


@pytest.mark.parametrize(
    "raw",
    [
        b"NaN",
        b'{"a": Infinity}',
        b"[" * 100_000,
        b"\xff\xfe",
        "\ufeff{}".encode(),
        b'{"a":"\\ud800"',
    ],
)
def test_hostile_json_is_a_parse_error(ready: tuple[Endpoint, Peer], raw: bytes) -> None:
    endpoint, peer = ready
    assert code(call(endpoint, peer, raw)) == -32700


def test_duplicate_registration_is_an_error() -> None:
    table = MethodTable()

    @table.register("x")
    async def first(peer: Peer) -> None: ...

    with pytest.raises(ValueError, match="twice"):

        @table.register("x")
        async def second(peer: Peer) -> None: ...


def test_error_codes_match_the_specification() -> None:
    assert errors.ParseError.code == -32700
    assert errors.InvalidRequest.code == -32600
    assert errors.MethodNotFound.code == -32601
    assert errors.InvalidParams.code == -32602
    assert errors.InternalError.code == -32603
    own = [c for c in errors.all_codes() if c > -32600]
    assert own and all(-32099 <= c <= -32000 for c in own)
    assert len(set(errors.all_codes())) == len(errors.all_codes())


def test_a_detached_method_is_answered_later_unless_batched() -> None:
    from coding_harness.daemon.server.rpc import Deferred

    table = MethodTable()

    @table.register("initialize")
    async def initialize(peer: Peer, protocol: Any) -> None:
        peer.initialized = True

    @table.register("slow", detached=True)
    async def slow(peer: Peer) -> str:
        return "done"

    endpoint, peer = Endpoint(table), Peer()
    early = call(endpoint, peer, '{"jsonrpc":"2.0","id":1,"method":"slow"}')
    assert code(early) == errors.NotInitialized.code  # the usual checks come first
    call(endpoint, peer, '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocol":1}}')
    deferred = call(endpoint, peer, '{"jsonrpc":"2.0","id":3,"method":"slow"}')
    assert isinstance(deferred, Deferred)
    assert asyncio.run(deferred.answer) == {"jsonrpc": "2.0", "result": "done", "id": 3}
    batched = call(endpoint, peer, '[{"jsonrpc":"2.0","id":4,"method":"slow"}]')
    assert batched == [{"jsonrpc": "2.0", "result": "done", "id": 4}]


def test_an_overloaded_peer_gets_retryable_errors_and_nothing_runs(
    ready: tuple[Endpoint, Peer],
) -> None:
    endpoint, peer = ready
    peer.overloaded = True
    refused = call(endpoint, peer, '{"jsonrpc":"2.0","id":5,"method":"subtract","params":[3,1]}')
    assert refused["id"] == 5 and code(refused) == errors.ServerOverloaded.code
    assert refused["error"]["data"]["retry_after"] > 0
    assert call(endpoint, peer, '{"jsonrpc":"2.0","method":"boom"}') is None
    peer.overloaded = False
    answered = call(endpoint, peer, '{"jsonrpc":"2.0","id":6,"method":"subtract","params":[3,1]}')
    assert answered["result"] == 2


def test_a_batch_whose_answers_grow_large_refuses_the_rest() -> None:
    table = MethodTable()

    @table.register("initialize")
    async def initialize(peer: Peer, protocol: Any) -> None:
        peer.initialized = True

    @table.register("big")
    async def big(peer: Peer) -> str:
        return "x" * 400

    endpoint, peer = Endpoint(table, max_answer=1000), Peer()
    call(endpoint, peer, '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol":1}}')
    batch = [{"jsonrpc": "2.0", "id": i, "method": "big"} for i in range(1, 6)]
    answers = call(endpoint, peer, json.dumps(batch))
    assert [a["id"] for a in answers] == [1, 2, 3, 4, 5]
    assert ["result" in a for a in answers] == [True, True, False, False, False]
    assert {code(a) for a in answers[2:]} == {errors.ServerOverloaded.code}
