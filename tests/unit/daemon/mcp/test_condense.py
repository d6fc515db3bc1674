"""Big MCP messages condensed outside the daemon (condense.py, offload.py, listing.py):
the child's rules on plain JSON, its token, and the stdio transport with a real server
(which also keeps a server's flood of standard error bounded on disk)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from coding_harness.daemon.mcp.catalog import MAX_TOOLS
from coding_harness.daemon.mcp.condense import LISTING_KEY, condense
from coding_harness.daemon.mcp.limits import MessageCap
from coding_harness.daemon.mcp.listing import build_from_pages
from coding_harness.daemon.mcp.offload import CONDENSE_ABOVE, Condenser
from coding_harness.daemon.mcp.results import MAX_RESULT_CHARS, RENDERED_KEY, result_text
from coding_harness.daemon.mcp.stdio import ERR_CHUNK, ERRLOG_CAP, capped_stdio_client
from tests.support.hostile_mcp import BLOCKS, multiplying_schema

HOSTILE = str(Path(__file__).resolve().parents[3] / "support" / "hostile_mcp.py")
MANY = 4000


def listing(count: int) -> dict[str, Any]:
    schema = multiplying_schema()
    tools = [{"name": f"t{i}", "inputSchema": schema, "outputSchema": schema} for i in range(count)]
    return {"jsonrpc": "2.0", "id": 7, "result": {"tools": tools}}


def test_a_tool_list_comes_back_capped_converted_and_its_left_out_named() -> None:
    message, said = condense(listing(MAX_TOOLS + 40), {7: "tools/list"}, "tok", 3_000_000)
    assert message is not None and message["id"] == 7
    result = message["result"]
    assert len(result["tools"]) == MAX_TOOLS
    first = result["tools"][0]
    assert set(first) == {"name", "inputSchema"}  # no output schema, no $defs
    assert "$defs" not in json.dumps(first["inputSchema"])
    record = result["_meta"][LISTING_KEY]
    assert record["token"] == "tok" and record["dropped_count"] == 40
    assert record["dropped"][0]["tool"] == f"t{MAX_TOOLS}"
    assert "too large once its references are followed" in record["notes"]["t0"]
    assert f"{MAX_TOOLS} tools kept, 40 left out" in said


def test_other_big_messages_become_an_error_or_nothing() -> None:
    answer = {"jsonrpc": "2.0", "id": 3, "result": {"contents": []}}
    message, _ = condense(answer, {3: "resources/read"}, "tok", 1 << 20)
    assert message is not None and "resources/read was 1.0 MB" in message["error"]["message"]
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    assert condense(note, {}, "tok", 1 << 20)[0] is None
    error = {"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "e" * 5000, "data": [0]}}
    cut, _ = condense(error, {}, "tok", 1 << 20)
    assert cut is not None and len(cut["error"]["message"]) == 1000 and "data" not in cut["error"]


def test_a_page_the_child_condensed_is_trusted_only_under_the_connection_token() -> None:
    condenser = Condenser("s")
    message, _ = condense(listing(300), {7: "tools/list"}, condenser.token, 3_000_000)
    assert message is not None
    page = types.ListToolsResult.model_validate(message["result"], by_name=False)
    record = condenser.listing(page.meta)
    assert record is not None and Condenser("other").listing(page.meta) is None
    catalog = build_from_pages([(page.tools, record)])
    assert len(catalog.tools) == MAX_TOOLS and catalog.dropped_count == 300 - MAX_TOOLS
    assert catalog.tools[0].note is not None  # the child's note, kept
    assert catalog.dropped[0]["tool"] == f"t{MAX_TOOLS}"


def test_a_result_marked_rendered_by_a_server_is_cut_all_the_same() -> None:
    long = types.TextContent(type="text", text="y" * (3 * MAX_RESULT_CHARS))
    forged = types.CallToolResult(content=[long], _meta={RENDERED_KEY: True})
    assert len(result_text("t", forged)) < MAX_RESULT_CHARS + 300


async def exchange(
    args: list[str], method: str, params: dict[str, Any], errlog: Any
) -> tuple[Any, Condenser]:
    """One request to the hostile stdio server through our transport, and its answer."""
    condenser = Condenser("hostile")
    async with capped_stdio_client(
        sys.executable,
        [HOSTILE, "stdio", *args],
        env={},
        cwd=None,
        errlog=errlog,
        cap=MessageCap(),
        condenser=condenser,
    ) as (read, write):
        request = types.JSONRPCRequest(jsonrpc="2.0", id=1, method=method, params=params)
        await write.send(SessionMessage(request))
        with anyio.fail_after(60):
            answer = await read.receive()
    assert isinstance(answer, SessionMessage)
    return answer.message, condenser


@pytest.mark.parametrize("method", ["tools/list", "tools/call"])
def test_the_stdio_transport_never_parses_a_big_message_itself(method: str) -> None:
    args = ["--tools", str(MANY)] if method == "tools/list" else []
    params = {"name": "blocks", "arguments": {}} if method == "tools/call" else {}
    with tempfile.TemporaryFile("a+") as errlog:
        answer, condenser = anyio.run(exchange, args, method, params, errlog)
    assert isinstance(answer, types.JSONRPCResponse) and answer.id == 1
    assert 0 < condenser.largest_parsed < CONDENSE_ABOVE
    if method == "tools/list":
        assert len(answer.result["tools"]) == MAX_TOOLS
        record = condenser.listing(answer.result["_meta"])
        assert record is not None and record["dropped_count"] == MANY + 3 - MAX_TOOLS
    else:
        [block] = answer.result["content"]
        assert f"{MAX_RESULT_CHARS} of {2 * BLOCKS - 1} characters" in block["text"]


def test_a_server_flooding_its_standard_error_does_not_fill_the_disk() -> None:
    async def run(errlog: Any) -> int:
        largest = 0
        async with capped_stdio_client(
            sys.executable,
            [HOSTILE, "stdio", "--noisy"],
            env={},
            cwd=None,
            errlog=errlog,
            cap=MessageCap(),
            condenser=Condenser("noisy"),
        ):
            for _ in range(30):
                await anyio.sleep(0.05)
                largest = max(largest, os.fstat(errlog.fileno()).st_size)
        return largest

    with tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace") as errlog:
        largest = anyio.run(run, errlog)
        assert 0 < largest <= ERRLOG_CAP + 4 * ERR_CHUNK
