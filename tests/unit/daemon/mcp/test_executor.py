"""MCP tools beside a turn's own: each call checked, put through the approval gate as its
server's `approve` says, sent to the server, and whatever happens answered as a result."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mcp_types as types
import pytest

from coding_harness.daemon.agent.seams import JSONObject, ToolCall, is_failed
from coding_harness.daemon.config.mcp_settings import McpServerSpec
from coding_harness.daemon.mcp.executor import McpTools, OfferedTool
from coding_harness.daemon.mcp.results import framed
from coding_harness.daemon.mcp.states import CallFailed
from coding_harness.daemon.security.secrets import REDACTED, collect_secrets
from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.protocol.modes import READ_ONLY
from tests.support.tool_context import ScriptedApprover, make_ctx, run

if TYPE_CHECKING:
    from coding_harness.daemon.mcp.link import ServerLink

KEY = "sk-test-5c1e0b9d8a7f6e42"
SECRETS = collect_secrets(["MODEL_KEY"], {"MODEL_KEY": KEY})
LOOKUP = "mcp__s__lookup"
WRITE = "mcp__s__write"


@dataclass(kw_only=True)
class StubLink:
    """A server link that records calls and answers with a text or a `CallFailed`."""

    spec: McpServerSpec
    answer: str = "the answer"
    is_error: bool = False  # the server's own "this call failed" (`isError`)
    failure: CallFailed | None = None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def call(
        self, tool: str, arguments: dict[str, Any], limit: float | None = None
    ) -> types.CallToolResult:
        self.calls.append((tool, arguments))
        if self.failure is not None:
            raise self.failure
        content = [types.TextContent(type="text", text=self.answer)]
        return types.CallToolResult(content=content, is_error=self.is_error)


class StubInner:
    """The turn's own executor: one tool, `read_file`; records what it is asked."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    def schemas(self) -> list[JSONObject]:
        return [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]

    async def execute(self, call: ToolCall) -> str:
        self.calls.append(call)
        if call.name == "read_file":
            return "inner read the file"
        return f"Error: there is no tool named '{call.name}'."


def offer(link: StubLink, tool: str, *, read_only: bool = False) -> OfferedTool:
    return OfferedTool(
        name=f"mcp__s__{tool}",
        tool=tool,
        description=f"the {tool} tool",
        schema={"type": "object", "properties": {"q": {"type": "string"}}},
        link=cast("ServerLink", link),
        spec=link.spec,
        read_only=read_only,
    )


def setup(
    tmp_path: Path,
    approver: ScriptedApprover | None = None,
    approve: str | tuple[str, ...] = "always",
    **flags: Any,
) -> tuple[McpTools, StubLink, StubInner]:
    link = StubLink(spec=McpServerSpec(name="s", command="srv", approve=approve))
    inner = StubInner()
    ctx, _ = make_ctx(tmp_path, approver, **flags)
    offered = [offer(link, "lookup", read_only=True), offer(link, "write")]
    return McpTools(inner, offered, ctx), link, inner


def answered(name: str) -> str:
    """The tool result of a call of `name` that answered "the answer", in its frame."""
    return framed(name, "s", "the answer")


def call(tools: McpTools, name: str, arguments: str | dict[str, Any]) -> str:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return run(tools.execute(ToolCall(id="c1", name=name, arguments=raw)))


def test_approve_always_asks_like_a_command_and_yes_runs(tmp_path: Path) -> None:
    approver = ScriptedApprover(("yes", ""))
    tools, link, _ = setup(tmp_path, approver)
    assert call(tools, LOOKUP, {"q": "zürich"}) == answered(LOOKUP)
    (request,) = approver.requests
    assert request.kind == "command" and (request.path, request.diff) == ("", "")
    assert LOOKUP in request.summary and "server 's'" in request.summary
    assert '{"q": "zürich"}' in request.summary
    assert link.calls == [("lookup", {"q": "zürich"})]  # the server's own name


@pytest.mark.parametrize(("decision", "verb"), [("no", "declined"), ("skip", "skipped")])
def test_a_refused_call_never_reaches_the_server(tmp_path: Path, decision: Any, verb: str) -> None:
    tools, link, _ = setup(tmp_path, ScriptedApprover((decision, "not now")))
    result = call(tools, WRITE, {"q": "x"})
    assert result == f"the user {verb} the call of '{WRITE}'; it did not run. Reason: not now"
    assert link.calls == []


def test_a_refusal_without_a_reason_says_none(tmp_path: Path) -> None:
    tools, _, _ = setup(tmp_path, ScriptedApprover(("no", "  ")))
    assert call(tools, WRITE, {}) == f"the user declined the call of '{WRITE}'; it did not run."


def test_long_arguments_are_shortened_in_the_question(tmp_path: Path) -> None:
    approver = ScriptedApprover(("yes", ""))
    tools, link, _ = setup(tmp_path, approver)
    call(tools, WRITE, {"q": "z" * 5000})
    summary = approver.requests[0].summary
    assert '{"q": "zzz' in summary and summary.endswith("zzz...")
    assert len(summary) < 600 and link.calls == [("write", {"q": "z" * 5000})]


def test_approve_never_runs_without_asking(tmp_path: Path) -> None:
    tools, link, _ = setup(tmp_path, approve="never")  # the approver fails if asked
    assert call(tools, WRITE, {"q": "1"}) == answered(WRITE)
    assert link.calls == [("write", {"q": "1"})]


def test_listed_tools_run_without_asking_and_the_rest_ask(tmp_path: Path) -> None:
    approver = ScriptedApprover(("no", ""))
    tools, link, _ = setup(tmp_path, approver, approve=("lookup",))
    assert call(tools, LOOKUP, {}) == answered(LOOKUP)
    assert "declined" in call(tools, WRITE, {})
    assert [WRITE in r.summary for r in approver.requests] == [True]
    assert link.calls == [("lookup", {})]


def test_auto_approve_runs_without_asking(tmp_path: Path) -> None:
    tools, link, _ = setup(tmp_path, auto_approve=True)
    assert call(tools, WRITE, {"q": "1"}) == answered(WRITE) and len(link.calls) == 1


def test_read_only_mode_offers_only_read_only_tools(tmp_path: Path) -> None:
    tools, link, inner = setup(tmp_path, ScriptedApprover(("yes", "")), mode=READ_ONLY)
    names = [schema["function"]["name"] for schema in tools.schemas()]
    assert names == ["read_file", LOOKUP]
    assert call(tools, WRITE, {"q": "1"}) == f"Error: there is no tool named '{WRITE}'."
    assert [c.name for c in inner.calls] == [WRITE] and link.calls == []
    assert call(tools, LOOKUP, {"q": "1"}) == answered(LOOKUP)


def test_read_only_mode_answers_other_tools_as_unknown_with_the_real_tools(
    tmp_path: Path,
) -> None:
    link = StubLink(spec=McpServerSpec(name="s", command="srv", approve="never"))
    ctx, _ = make_ctx(tmp_path, mode=READ_ONLY)
    tools = McpTools(build_tools(ctx), [offer(link, "write")], ctx)
    result = call(tools, WRITE, {"q": "1"})
    assert result.startswith(f"Error: there is no tool named '{WRITE}'. Available tools:")
    assert link.calls == []


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ('{"q": ', "are not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('"text"', "must be a JSON object"),
        ("null", "must be a JSON object"),
    ],
)
def test_arguments_that_are_no_json_object_are_answered_without_a_call(
    tmp_path: Path, raw: str, says: str
) -> None:
    tools, link, _ = setup(tmp_path, approve="never")
    result = call(tools, LOOKUP, raw)
    assert result.startswith("Error: ") and says in result and LOOKUP in result
    assert link.calls == []


def test_empty_arguments_are_an_empty_object(tmp_path: Path) -> None:
    tools, link, _ = setup(tmp_path, approve="never")
    call(tools, LOOKUP, "  ")
    assert link.calls == [("lookup", {})]


@pytest.mark.parametrize("sent", [KEY, KEY.encode().hex(), f"https://h/?k={KEY}"])
def test_a_secret_in_the_arguments_is_refused_before_asking(tmp_path: Path, sent: str) -> None:
    tools, link, _ = setup(tmp_path, secrets=SECRETS)  # the approver fails if asked
    result = call(tools, LOOKUP, {"q": {"nested": [sent]}})
    assert "refused" in result and "the value of MODEL_KEY" in result and KEY not in result
    assert link.calls == []


def test_a_json_escaped_secret_is_refused_too(tmp_path: Path) -> None:
    tools, link, _ = setup(tmp_path, approve="never", secrets=SECRETS)
    escaped = '{"q": "\\u0073' + KEY[1:] + '"}'
    assert json.loads(escaped) == {"q": KEY}
    result = call(tools, LOOKUP, escaped)
    assert "refused" in result
    assert link.calls == []


def test_a_secret_in_the_result_is_redacted(tmp_path: Path) -> None:
    tools, link, _ = setup(tmp_path, approve="never", secrets=SECRETS)
    link.answer = f"config says {KEY}"
    assert call(tools, LOOKUP, {}) == framed(LOOKUP, "s", f"config says {REDACTED}")


def test_a_failed_call_is_a_result_naming_the_server(tmp_path: Path) -> None:
    tools, link, _ = setup(tmp_path, approve="never")
    link.failure = CallFailed("no answer within 60 s")
    result = call(tools, LOOKUP, {"q": "1"})
    assert result == f"Error: the MCP tool '{LOOKUP}' (server 's') failed: no answer within 60 s."


def test_a_result_the_server_marks_as_an_error_is_a_failed_call(tmp_path: Path) -> None:
    tools, link, _ = setup(tmp_path, auto_approve=True)
    link.answer, link.is_error = "zone 'Mars/Base' is unknown", True
    said = call(tools, LOOKUP, {"q": "x"})
    assert "zone 'Mars/Base' is unknown" in said
    assert is_failed(said)  # the tool.result event says failed, whatever the wording
    link.is_error = False
    assert not is_failed(call(tools, LOOKUP, {"q": "x"}))


def test_other_calls_go_to_the_turns_own_tools(tmp_path: Path) -> None:
    tools, link, inner = setup(tmp_path)  # the approver fails if asked
    assert call(tools, "read_file", {"path": "a"}) == "inner read the file"
    assert call(tools, "mcp__other__x", {}) == "Error: there is no tool named 'mcp__other__x'."
    assert [c.name for c in inner.calls] == ["read_file", "mcp__other__x"]
    assert link.calls == []


def test_a_name_with_spaces_around_it_is_still_the_mcp_tool(tmp_path: Path) -> None:
    tools, link, _ = setup(tmp_path, approve="never")
    assert call(tools, f" {LOOKUP}\n", {}) == answered(LOOKUP) and len(link.calls) == 1


def test_schemas_are_the_turns_own_then_each_offered_tool(tmp_path: Path) -> None:
    tools, _, _ = setup(tmp_path)
    schemas = tools.schemas()
    assert [s["function"]["name"] for s in schemas] == ["read_file", LOOKUP, WRITE]
    assert schemas[1] == {
        "type": "function",
        "function": {
            "name": LOOKUP,
            "description": "the lookup tool",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
