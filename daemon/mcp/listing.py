"""A server's tool list fetched into a `catalog.Catalog`, never converted on the event loop.

The list is read page by page until more than `MAX_TOOLS` tools are in (the
rest would be left out) or `TOOL_PAGES` pages were read. A page past
`offload.CONDENSE_ABOVE` bytes was condensed by the child already: its tools
come with their schemas converted, its notes and the tools it left out under
the connection's token (`Condenser.listing`). The catalog is built in a worker
thread (`asyncio.to_thread`); with condensed pages that is little work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from coding_harness.daemon.mcp.catalog import MAX_TOOLS, Catalog
from coding_harness.daemon.mcp.offload import Condenser

TOOL_PAGES = 20
Page = tuple[Sequence[Any], dict[str, Any] | None]  # its tools, the child's record of it


async def fetch_catalog(client: Any, condenser: Condenser) -> tuple[Catalog, int | None]:
    """The server's tools as a catalog, and the shortest cache hint of its pages (ms)."""
    pages: list[Page] = []
    cursor: str | None = None
    ttl: int | None = None
    listed = 0
    for _ in range(TOOL_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        record = condenser.listing(page.meta)
        pages.append((page.tools, record))
        listed += len(page.tools) + (_count(record) if record is not None else 0)
        ttl = page.ttl_ms if ttl is None else min(ttl, page.ttl_ms or ttl)
        cursor = page.next_cursor
        if cursor is None or listed > MAX_TOOLS:
            break
    catalog = await asyncio.to_thread(build_from_pages, pages, more_pages=cursor is not None)
    return catalog, ttl


def build_from_pages(pages: Sequence[Page], *, more_pages: bool = False) -> Catalog:
    """The catalog of the pages read, condensed or not. CPU-bound: off the event loop."""
    catalog = Catalog()
    for tools, record in pages:
        notes = record.get("notes") if record is not None else None
        notes = notes if isinstance(notes, dict) else {}
        for tool in tools:
            name = str(tool.name)
            if record is None:
                catalog.add(tool, name, tool.input_schema)
                continue
            note = notes.get(name)
            converted = (tool.input_schema, note if isinstance(note, str) else None)
            catalog.add(tool, name, None, converted=converted)
        if record is not None:
            dropped = record.get("dropped")
            named = [
                {"tool": str(entry.get("tool")), "reason": str(entry.get("reason"))}
                for entry in (dropped if isinstance(dropped, list) else [])
                if isinstance(entry, dict)
            ]
            catalog.absorb(named, _count(record))
    if more_pages:
        catalog.drop("...", "the server has more pages of tools; they were not read")
    return catalog


def _count(record: dict[str, Any]) -> int:
    count = record.get("dropped_count")
    return count if isinstance(count, int) and count >= 0 else 0
