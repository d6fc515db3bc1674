"""The condensing child: one big MCP message in, a small one out, parsed outside the daemon.

Parsing a message of a few megabytes, and the SDK's validation of it, hold the
interpreter lock for most of a second: a worker thread of the daemon would
stall every session as much. So a message past `offload.CONDENSE_ABOVE` is
handed to this module, run as its own short-lived process (`python -I -m
coding_harness.daemon.mcp.condense`, isolated, no secret in its environment):
it reads a header line (`token`, and the `methods` of the requests in flight,
as `[id, method]` pairs), then the message, at most `MAX_MESSAGE_BYTES`, and
writes two lines: what it did, in words, and the message the daemon parses
instead (an empty line when there is none to deliver).

A `tools/list` answer comes back with the caps of `catalog.py` applied: at most
`MAX_TOOLS` tools, each with its schema converted and its description cut, and
under `_meta[LISTING_KEY]` (with the header's token, which the server never
sees) the conversion notes and the tools left out. A `tools/call` answer comes
back rendered as the text the model reads (`results.rendered`: one block, cut
at `MAX_RESULT_CHARS`). Any other answer over the threshold becomes an error
naming its size; a request or notification that big is dropped. JSON only:
what the daemon reads back is data.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from coding_harness.daemon.mcp.catalog import Catalog
from coding_harness.daemon.mcp.limits import MAX_MESSAGE_BYTES, size_text

LISTING_KEY = "coding-harness/listing"
MAX_DESCRIPTION = 2000  # characters; what a turn offers of a tool's description
MAX_TITLE = 200
MAX_ANNOTATIONS = 2048  # characters of a tool's annotations as JSON; past it, left out
MAX_CURSOR = 4096
MAX_ERROR_TEXT = 1000
Message = dict[str, Any]


def condense(
    message: Any, methods: dict[Any, str], token: str, size: int
) -> tuple[Message | None, str]:
    """The small message to deliver instead of `message` (None: nothing), and what was done."""
    big = size_text(size) if size < 1024 * 1024 else f"{size / 1048576:.1f} MB"
    if not isinstance(message, dict) or ("result" not in message and "error" not in message):
        kind = message.get("method") if isinstance(message, dict) else None
        return None, f"a {big} message ({str(kind)[:80]}) that answers nothing was dropped"
    ident = message.get("id")
    method = methods.get(ident) if isinstance(ident, str | int) else None
    if "error" in message:
        return _error(ident, _error_text(message["error"])), f"a {big} error answer was cut"
    result = message["result"]
    if method == "tools/list" and isinstance(result, dict):
        listing, catalog = condensed_listing(result, token)
        done = f"{len(catalog.tools)} tools kept, {catalog.dropped_count} left out"
        return {"jsonrpc": "2.0", "id": ident, "result": listing}, f"a {big} tool list: {done}"
    if method == "tools/call":
        call = condensed_call(result)
        if call is None:
            return _error(ident, "the server's answer is not a tool result"), f"a {big} non-result"
        return {"jsonrpc": "2.0", "id": ident, "result": call}, f"a {big} tool result, rendered"
    said = f"the server's answer to {method or 'a request'} was {big}, more than the daemon takes"
    return _error(ident, said), f"a {big} answer to {method} was refused"


def condensed_call(result: dict[str, Any]) -> dict[str, Any] | None:
    """A `tools/call` result as the one text block the model would read of it (cut),
    or None when it is not a tool result. Loads the SDK's types (about 0.4 s)."""
    from mcp_types import CallToolResult
    from pydantic import ValidationError  # the SDK's dependency

    from coding_harness.daemon.mcp.results import rendered

    try:
        parsed = CallToolResult.model_validate(result, by_name=False)
    except ValidationError:
        return None
    return rendered(parsed)


def condensed_listing(result: dict[str, Any], token: str) -> tuple[dict[str, Any], Catalog]:
    """A `tools/list` result cut to the caps, its schemas converted, the rest named."""
    catalog = Catalog()
    tools = result.get("tools")
    for entry in tools if isinstance(tools, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            catalog.drop("(no name)", "not a tool: it has no name")
            continue
        catalog.add(entry, name, entry.get("inputSchema"))
    listing: dict[str, Any] = {
        "tools": [_compact(kept.tool, kept.schema) for kept in catalog.tools]
    }
    cursor = result.get("nextCursor")
    if isinstance(cursor, str) and len(cursor) <= MAX_CURSOR:
        listing["nextCursor"] = cursor
    elif cursor is not None:
        catalog.drop("...", "the server's next-page cursor is not a short string; no more pages")
    if isinstance(result.get("ttlMs"), int):
        listing["ttlMs"] = result["ttlMs"]
    listing["_meta"] = {
        LISTING_KEY: {
            "token": token,
            "notes": {kept.tool["name"]: kept.note for kept in catalog.tools if kept.note},
            "dropped": catalog.dropped,
            "dropped_count": catalog.dropped_count,
        }
    }
    return listing, catalog


def _compact(tool: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The fields a turn uses, each bounded; the output schema, icons and `_meta` go."""
    kept: dict[str, Any] = {"name": tool["name"], "inputSchema": schema}
    for key, limit in (("description", MAX_DESCRIPTION), ("title", MAX_TITLE)):
        if isinstance(tool.get(key), str):
            kept[key] = tool[key][:limit]
    annotations = tool.get("annotations")
    if isinstance(annotations, dict) and len(json.dumps(annotations)) <= MAX_ANNOTATIONS:
        kept["annotations"] = annotations
    return kept


def _error(ident: Any, text: str) -> Message:
    error = {"code": -32603, "message": text}
    return {"jsonrpc": "2.0", "id": ident if isinstance(ident, str | int) else None, "error": error}


def _error_text(error: Any) -> str:
    said = error.get("message") if isinstance(error, dict) else None
    return str(said)[:MAX_ERROR_TEXT] if said is not None else "the server answered with an error"


def main() -> None:
    source = sys.stdin.buffer
    header = json.loads(source.readline(65536))
    data = source.read(MAX_MESSAGE_BYTES + 1)
    methods = {ident: str(method) for ident, method in header.get("methods", [])}
    try:
        message: Any = json.loads(data)
    except ValueError as exc:
        message, said = None, f"a message that is not JSON ({exc}) was dropped"
    else:
        message, said = condense(message, methods, str(header["token"]), len(data))
    out = sys.stdout
    out.write(" ".join(said.split()) + "\n")
    out.write(json.dumps(message, separators=(",", ":")) if message is not None else "")
    out.write("\n")
    out.flush()


if __name__ == "__main__":
    main()
