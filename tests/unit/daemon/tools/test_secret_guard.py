"""Secrets at the tools' edge: calls carrying one are refused before anything runs or is
sent, and results, events and approval requests have every known value redacted."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import ApprovalRequest, ToolCall
from coding_harness.daemon.security.secrets import REDACTED, Secrets, collect_secrets
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.registry import BoundTools, ToolRegistry
from coding_harness.daemon.tools.web.fetch import FetchPolicy
from coding_harness.daemon.tools.web.search import SearchResult
from tests.support.tool_context import ScriptedApprover, make_ctx, run
from tests.support.web_pages import local_site, send

KEY = "sk-test-5c1e0b9d8a7f6e42"
SECRETS = collect_secrets(["MODEL_KEY"], {"MODEL_KEY": KEY})


def execute(tools: BoundTools, name: str, **arguments: str) -> str:
    return run(tools.execute(ToolCall(id="c1", name=name, arguments=json.dumps(arguments))))


@pytest.fixture
def site() -> Iterator[tuple[str, list[str]]]:
    """A local web site that records the path of every request it gets."""
    seen: list[str] = []

    def page(handler: BaseHTTPRequestHandler) -> None:
        seen.append(handler.path)
        send(handler, 200, f"the page says {KEY}".encode())

    with local_site({"/page": page}) as base:
        yield base, seen


def test_a_fetch_carrying_the_key_is_refused_without_a_request(
    tmp_path: Path, site: tuple[str, list[str]]
) -> None:
    base, seen = site
    ctx, _ = make_ctx(tmp_path, secrets=SECRETS, fetch=FetchPolicy(allow_private=True))
    tools = build_tools(ctx)
    encoded = base64.urlsafe_b64encode(b"k=" + KEY.encode()).decode()
    for url in (f"{base}/page?k={KEY}", f"{base}/page?d={encoded}", f"{base}/{KEY.encode().hex()}"):
        result = execute(tools, "fetch_url", url=url)
        assert "refused" in result and "the value of MODEL_KEY" in result, url
        assert KEY not in result
    assert seen == []
    fetched = execute(tools, "fetch_url", url=f"{base}/page?q=json")
    assert seen == ["/page?q=json"]  # an honest fetch still goes out...
    assert f"the page says {REDACTED}" in fetched and KEY not in fetched  # ...and is redacted


class RecordingEngine:
    name = "recording"

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def search(self, query: str, count: int) -> list[SearchResult]:
        self.queries.append(query)
        return [SearchResult(title="t", url="https://example.com", snippet=f"key {KEY}")]


def test_a_web_search_carrying_the_key_is_refused_without_a_search(tmp_path: Path) -> None:
    engine = RecordingEngine()
    ctx, _ = make_ctx(tmp_path, secrets=SECRETS, search=engine)
    tools = build_tools(ctx)
    result = execute(tools, "web_search", query=f"what is {KEY}")
    assert "refused" in result and engine.queries == []
    found = execute(tools, "web_search", query="python json")
    assert engine.queries == ["python json"] and f"key {REDACTED}" in found


def test_a_file_holding_the_key_is_read_redacted(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text(f"API_KEY = '{KEY}'\n")
    tools = build_tools(make_ctx(tmp_path, secrets=SECRETS)[0])
    assert execute(tools, "read_file", path="settings.py") == f"API_KEY = '{REDACTED}'\n"
    assert KEY not in execute(tools, "grep", pattern="sk-test", path=".")


def _leaky_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool("publish", "Emits an event and asks a question.", [])
    async def publish(ctx: ToolContext) -> str:
        ctx.events.emit("check.result", {"output": f"make: {KEY}", "passed": False})
        request = ApprovalRequest(kind="edit", path="a.py", diff=f"-{KEY}\n+x", summary=KEY)
        decision = await ctx.approver.ask(request)
        return f"decided {decision.decision}"

    @registry.tool("fail", "Raises with the key in its message.", [])
    async def fail(ctx: ToolContext) -> str:
        raise RuntimeError(f"could not use {KEY}")

    return registry


def test_events_approvals_and_errors_of_a_tool_are_redacted(tmp_path: Path) -> None:
    approver = ScriptedApprover(("yes", ""))
    ctx, sink = make_ctx(tmp_path, approver, secrets=SECRETS)
    tools = BoundTools(_leaky_registry(), ctx)
    assert execute(tools, "publish") == "decided yes"
    assert sink.of_kind("check.result") == [{"output": f"make: {REDACTED}", "passed": False}]
    [asked] = approver.requests
    assert KEY not in f"{asked.diff}{asked.summary}" and REDACTED in asked.diff
    assert execute(tools, "fail") == f"Error: tool 'fail' failed: could not use {REDACTED}"


def test_without_known_secrets_nothing_changes(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(f"{KEY}\n")
    ctx, _ = make_ctx(tmp_path, secrets=Secrets())
    tools = build_tools(ctx)
    assert execute(tools, "read_file", path="notes.txt") == f"{KEY}\n"
