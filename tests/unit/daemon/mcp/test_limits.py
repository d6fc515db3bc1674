"""The caps on what an MCP server sends: lines split at awkward places, HTTP bodies and
events counted, tool lists cut and named, `$ref` copies bounded (limits.py, http_cap.py,
catalog.py, schemas.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx2
import mcp_types as types
import pytest

from coding_harness.daemon.mcp.catalog import MAX_TOOLS, build_catalog
from coding_harness.daemon.mcp.http_cap import BodyTooLarge, CappedStream
from coding_harness.daemon.mcp.limits import LineSplitter, MessageCap, MessageTooLarge
from coding_harness.daemon.mcp.schemas import MAX_SCHEMA_CHARS, provider_schema


def test_lines_split_anywhere_come_out_whole() -> None:
    splitter = LineSplitter(MessageCap(limit=10))
    assert splitter.feed(b'{"a"') == []
    assert splitter.feed(b":1}\n{") == [b'{"a":1}']
    assert splitter.feed(b"}\n\n") == [b"{}", b""]


def test_a_line_past_the_cap_is_a_breach_named_once_and_wakes_the_link() -> None:
    woken: list[bool] = []
    cap = MessageCap(limit=8, on_breach=lambda: woken.append(True))
    splitter = LineSplitter(cap)
    assert splitter.feed(b"12345678\n") == [b"12345678"]
    splitter.feed(b"12345")
    with pytest.raises(MessageTooLarge, match="more than 8 bytes"):
        splitter.feed(b"6789")  # no newline yet: what is held is over the cap already
    assert woken == [True] and cap.breach is not None and "\n" not in cap.breach
    cap.exceeded("more")
    assert woken == [True]  # the first breach is the one kept


def test_arguments_past_the_cap_are_refused_naming_the_fix() -> None:
    cap = MessageCap(limit=4 * 1024 * 1024)
    assert cap.check_outgoing(1000) is None
    said = cap.check_outgoing(5 * 1024 * 1024)
    assert said is not None and "5 MiB, over the 4 MiB" in said and "path instead" in said


class Chunks(httpx2.AsyncByteStream):
    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def read(stream: CappedStream) -> list[bytes]:
    async def collect() -> list[bytes]:
        return [chunk async for chunk in stream]

    return asyncio.run(collect())


def test_a_json_body_is_counted_whole() -> None:
    cap = MessageCap(limit=10)
    assert read(CappedStream(Chunks(b"12345", b"67890"), cap, events=False)) == [b"12345", b"67890"]
    with pytest.raises(BodyTooLarge, match="an answer of more than 10 bytes"):
        read(CappedStream(Chunks(b"12345", b"67890", b"1"), MessageCap(limit=10), events=False))


def test_an_event_stream_is_counted_per_event_with_ends_split_across_chunks() -> None:
    cap = MessageCap(limit=16)  # each event is at most 14 bytes; 20 are 200
    many = [b"data: 1234\n", b"\n", b"data: 5678\r\n\r", b"\ndata: 9\n\n"] * 5
    assert len(read(CappedStream(Chunks(*many), cap, events=True))) == 20
    assert cap.breach is None
    endless = CappedStream(Chunks(b"data: 1234", b"5678", b"9"), MessageCap(limit=12), events=True)
    with pytest.raises(BodyTooLarge, match="one server-sent event"):
        read(endless)


def tool(name: str, schema: object) -> types.Tool:
    return types.Tool(name=name, input_schema=schema)  # type: ignore[arg-type]


def test_a_long_tool_list_is_cut_and_what_is_left_out_named() -> None:
    plain = {"type": "object", "properties": {"x": {"type": "string"}}}
    catalog = build_catalog([tool(f"t{i}", plain) for i in range(MAX_TOOLS + 150)], more_pages=True)
    assert len(catalog.tools) == MAX_TOOLS
    assert catalog.dropped_count == 151  # the 150, and the pages not read
    assert catalog.dropped[0] == {
        "tool": f"t{MAX_TOOLS}",
        "reason": f"past the first {MAX_TOOLS} tools, the most one server may offer",
    }
    assert len(catalog.dropped) == 100


def test_a_schema_too_large_even_cut_down_leaves_the_tool_out() -> None:
    wide = {"type": "object", "properties": {f"p{i:05d}": {"type": "string"} for i in range(9000)}}
    catalog = build_catalog([tool("wide", wide), tool("ok", {"type": "object"})])
    assert [entry.tool.name for entry in catalog.tools] == ["ok"]
    assert catalog.dropped == [
        {"tool": "wide", "reason": "its input schema is over 64 KiB even cut to its top level"}
    ]


def test_a_long_text_copied_through_refs_is_bounded_by_characters() -> None:
    refs = {f"r{i}": {"$ref": "#/$defs/long"} for i in range(50)}
    schema = {
        "type": "object",
        "properties": refs,
        "$defs": {"long": {"type": "string", "description": "d" * 2000}},
    }
    out, note = provider_schema(schema)  # 50 copies: 100,000 characters once written
    assert note is not None and "too large once its references are followed" in note
    assert len(json.dumps(out)) < MAX_SCHEMA_CHARS
