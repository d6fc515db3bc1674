"""A server's tool list as turns offer it: capped, and converted once per listing.

A server may list thousands of tools whose schemas multiply through `$ref`s;
converting them for every turn held each turn's start (and the event loop) for
seconds. `build_catalog` runs once each time the list is fetched, in a worker
thread (`ServerLink` calls it through `asyncio.to_thread`): it keeps the first
`MAX_TOOLS`, converts each schema (`schemas.provider_schema`, itself bounded),
and leaves out a tool whose schema is still over `MAX_CONVERTED_SCHEMA` cut to
its top level, and the tools past `MAX_SERVER_SCHEMAS` characters of schemas in
all. What it leaves out is named (`dropped`, the first `DROPPED_NAMED` of them,
and counted), and `mcp.list` shows it. Free of the SDK: `Catalog.add` takes the
tool's name and schema beside the tool itself, so the condensing child
(`condense.py`) runs the same caps on plain JSON, and a listing it condensed
comes in with its schemas converted already (`converted`), its left-out tools
named (`absorb`).
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
    listed: int = 0  # tools the server listed so far, offered or not
    chars: int = 0  # of the schemas offered so far

    def drop(self, tool: str, reason: str) -> None:
        self.dropped_count += 1
        if len(self.dropped) < DROPPED_NAMED:
            self.dropped.append({"tool": tool[:200], "reason": reason})

    def add(
        self,
        tool: Any,
        name: str,
        input_schema: Any,
        *,
        converted: tuple[dict[str, Any], str | None] | None = None,
    ) -> bool:
        """Offer `tool` unless a cap leaves it out (then it is named); `converted` is its
        schema and note when converted already. CPU-bound: off the event loop."""
        self.listed += 1
        if self.listed > MAX_TOOLS:
            self.drop(name, f"past the first {MAX_TOOLS} tools, the most one server may offer")
            return False
        schema, note = converted if converted is not None else provider_schema(input_schema)
        chars = len(json.dumps(schema))
        if chars > MAX_CONVERTED_SCHEMA:
            limit = size_text(MAX_CONVERTED_SCHEMA)
            self.drop(name, f"its input schema is over {limit} even cut to its top level")
            return False
        if self.chars + chars > MAX_SERVER_SCHEMAS:
            limit = size_text(MAX_SERVER_SCHEMAS)
            self.drop(name, f"the server's tool schemas pass {limit} in all before it")
            return False
        self.chars += chars
        self.tools.append(CatalogTool(tool=tool, schema=schema, note=note, chars=chars))
        return True

    def absorb(self, dropped: list[dict[str, str]], count: int) -> None:
        """Count the tools a condensing child left out of a page (it named `dropped`)."""
        self.listed += count
        self.dropped_count += count
        room = DROPPED_NAMED - len(self.dropped)
        self.dropped.extend(dropped[: max(0, room)])


def build_catalog(tools: Sequence[Any], *, more_pages: bool = False) -> Catalog:
    """The tools a server offers (SDK tools, read by `name` and `input_schema`)."""
    catalog = Catalog()
    for tool in tools:
        catalog.add(tool, str(tool.name), tool.input_schema)
    if more_pages:
        catalog.drop("...", "the server has more pages of tools; they were not read")
    return catalog
