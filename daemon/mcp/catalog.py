"""A server's tool list as turns offer it: capped, and converted once per listing.

A server may list thousands of tools whose schemas multiply through `$ref`s;
converting them for every turn held each turn's start (and the event loop) for
seconds. `build_catalog` runs once each time the list is fetched, in a worker
thread (`ServerLink` calls it through `asyncio.to_thread`): it keeps the first
`MAX_TOOLS`, converts each schema (`schemas.provider_schema`, itself bounded),
and leaves out a tool whose schema is still over `MAX_CONVERTED_SCHEMA` cut to
its top level, and the tools past `MAX_SERVER_SCHEMAS` characters of schemas in
all. What it leaves out is named (`dropped`, the first `DROPPED_NAMED` of them,
and counted), and `mcp.list` shows it. Free of the SDK: tools are read by their
attributes (`name`, `input_schema`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from coding_harness.daemon.mcp.limits import size_text
from coding_harness.daemon.mcp.schemas import provider_schema

# Tools one server may offer: more is no help to a model, and each costs context.
MAX_TOOLS = 256
# Characters of one tool's schema as offered, after conversion (cut to its top level).
MAX_CONVERTED_SCHEMA = 64 * 1024
# Characters of all of one server's schemas: they go with every request to the model.
MAX_SERVER_SCHEMAS = 1024 * 1024
# Tools left out that `mcp.list` names one by one; the rest are counted.
DROPPED_NAMED = 100


@dataclass(kw_only=True, slots=True, frozen=True)
class CatalogTool:
    """One tool as offered: the server's tool, its converted schema, and a note if changed."""

    tool: Any  # mcp_types.Tool
    schema: dict[str, Any]
    note: str | None
    chars: int  # of the schema as JSON


@dataclass(kw_only=True, slots=True)
class Catalog:
    tools: list[CatalogTool] = field(default_factory=list)
    dropped: list[dict[str, str]] = field(default_factory=list)  # {tool, reason}
    dropped_count: int = 0

    def drop(self, tool: str, reason: str) -> None:
        self.dropped_count += 1
        if len(self.dropped) < DROPPED_NAMED:
            self.dropped.append({"tool": tool[:200], "reason": reason})


def build_catalog(tools: Sequence[Any], *, more_pages: bool = False) -> Catalog:
    """The tools a server offers; CPU-bound (run it off the event loop)."""
    catalog = Catalog()
    total = 0
    for index, tool in enumerate(tools):
        name = str(tool.name)
        if index >= MAX_TOOLS:
            catalog.drop(name, f"past the first {MAX_TOOLS} tools, the most one server may offer")
            continue
        schema, note = provider_schema(tool.input_schema)
        chars = len(json.dumps(schema))
        if chars > MAX_CONVERTED_SCHEMA:
            limit = size_text(MAX_CONVERTED_SCHEMA)
            catalog.drop(name, f"its input schema is over {limit} even cut to its top level")
            continue
        if total + chars > MAX_SERVER_SCHEMAS:
            limit = size_text(MAX_SERVER_SCHEMAS)
            catalog.drop(name, f"the server's tool schemas pass {limit} in all before it")
            continue
        total += chars
        catalog.tools.append(CatalogTool(tool=tool, schema=schema, note=note, chars=chars))
    if more_pages:
        catalog.drop("...", "the server has more pages of tools; they were not read")
    return catalog
