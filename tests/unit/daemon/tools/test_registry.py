"""The registry: decorator registration, schemas, and malformed calls as results."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import ToolCall
from coding_harness.daemon.tools.builtin import BUILTIN_TOOLS, build_tools
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.registry import BoundTools, DuplicateToolError, ToolRegistry
from tests.support.tool_context import make_ctx, run
from tests.support.waiting import until

HANGING: list[ToolContext] = []  # the contexts the `hang` tool was called with


def sample_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool("echo", "Repeat the arguments.", [("a", "first"), ("b", "second")])
    async def echo(ctx: ToolContext, *, a: str, b: str) -> str:
        return f"a={a!r} b={b!r}"

    @registry.tool("boom", "Always fails.", [])
    async def boom(ctx: ToolContext) -> str:
        raise RuntimeError("kaboom")

    @registry.tool("refuse", "Always refuses.", [])
    async def refuse(ctx: ToolContext) -> str:
        raise ToolRefusal("refused: not today")

    @registry.tool("hang", "Waits forever.", [])
    async def hang(ctx: ToolContext) -> str:
        HANGING.append(ctx)
        await asyncio.Event().wait()
        return "never"

    return registry


@pytest.fixture
def tools(tmp_path: Path) -> BoundTools:
    ctx, _ = make_ctx(tmp_path)
    return BoundTools(sample_registry(), ctx)


def call(tools: BoundTools, name: str, arguments: str) -> str:
    return run(tools.execute(ToolCall(id="1", name=name, arguments=arguments)))


def test_duplicate_registration_is_an_error() -> None:
    registry = sample_registry()
    with pytest.raises(DuplicateToolError, match="'echo'"):

        @registry.tool("echo", "again", [])
        async def echo_again(ctx: ToolContext) -> str:
            return ""


def test_schemas_follow_function_calling_format() -> None:
    [schema] = sample_registry().schemas(["echo"])
    assert schema == {
        "type": "function",
        "function": {
            "name": "echo",
            "description": "Repeat the arguments.",
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "first"},
                    "b": {"type": "string", "description": "second"},
                },
                "required": ["a", "b"],
            },
        },
    }
    with pytest.raises(KeyError):
        sample_registry().schemas(["nope"])


def test_builtin_tools_are_the_contract(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    schemas = build_tools(ctx).schemas()
    signature = {s["function"]["name"]: s["function"]["parameters"]["required"] for s in schemas}
    assert signature == {
        "read_file": ["path"],
        "list_dir": ["path"],
        "grep": ["pattern", "path"],
        "run_shell": ["command"],
        "propose_edit": ["path", "old", "new"],
        "write_file": ["path", "content"],
        "replace_text": ["path", "old_text", "new_text"],
        "fetch_url": ["url"],
    }
    # find_symbol is offered only with a code index, web_search only with search on.
    assert sorted(BUILTIN_TOOLS.names()) == sorted([*signature, "find_symbol", "web_search"])
    assert [s["function"]["name"] for s in build_tools(ctx, ["grep"]).schemas()] == ["grep"]


def test_a_good_call_runs(tools: BoundTools) -> None:
    assert call(tools, "echo", '{"a": "x", "b": "y"}') == "a='x' b='y'"
    assert call(tools, " echo ", '{"a": "x", "b": "y", "extra": 1}') == "a='x' b='y'"


def test_empty_name_says_the_call_was_cut_off(tools: BoundTools) -> None:
    result = call(tools, "", '{"path": "src/a')
    assert "cut off before a tool name arrived" in result
    assert '{"path": "src/a' in result


def test_invalid_json_names_the_expected_arguments(tools: BoundTools) -> None:
    result = call(tools, "echo", '{"a": "x", "b": ')
    assert "not valid JSON" in result
    assert "Expected a JSON object with: a, b" in result


def test_long_arguments_are_shortened_in_messages(tools: BoundTools) -> None:
    result = call(tools, "echo", '{"a": "' + "z" * 5000)
    assert "z" * 200 not in result
    assert "..." in result


@pytest.mark.parametrize(
    ("raw", "kind"), [("[1, 2]", "an array"), ('"a"', "a string"), ("3", "a number")]
)
def test_arguments_must_be_an_object(tools: BoundTools, raw: str, kind: str) -> None:
    result = call(tools, "echo", raw)
    assert f"must be a JSON object, not {kind}" in result


def test_unknown_tool_lists_the_available_ones(tools: BoundTools) -> None:
    result = call(tools, "delete_file", "{}")
    assert "no tool named 'delete_file'" in result
    assert "echo, boom, refuse, hang" in result


def test_tools_outside_the_bound_names_are_unknown(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    tools = BoundTools(sample_registry(), ctx, ["echo"])
    assert "no tool named 'boom'" in call(tools, "boom", "{}")
    with pytest.raises(KeyError):
        BoundTools(sample_registry(), ctx, ["missing"])


def test_missing_arguments_are_named(tools: BoundTools) -> None:
    result = call(tools, "echo", '{"a": "x"}')
    assert "missing required argument(s): b" in result
    assert "Expected a JSON object with: a, b" in result
    assert "missing required argument(s): a, b" in call(tools, "echo", "")
    assert "missing required argument(s): b" in call(tools, "echo", '{"a": "x", "b": null}')


def test_scalars_are_coerced_and_containers_refused(tools: BoundTools) -> None:
    assert call(tools, "echo", '{"a": 12, "b": true}') == "a='12' b='true'"
    assert call(tools, "echo", '{"a": 1.5, "b": false}') == "a='1.5' b='false'"
    result = call(tools, "echo", '{"a": {"k": 1}, "b": "y"}')
    assert "argument 'a' of tool 'echo' must be a string, not an object" in result
    assert "not an array" in call(tools, "echo", '{"a": "x", "b": [1]}')


def test_handler_errors_become_results_and_are_logged(
    tools: BoundTools, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        result = call(tools, "boom", "{}")
    assert result == "Error: tool 'boom' failed: kaboom"
    assert "kaboom" in caplog.text
    assert caplog.records[0].exc_info is not None


def test_refusals_are_returned_as_they_are(tools: BoundTools) -> None:
    assert call(tools, "refuse", "{}") == "refused: not today"


def test_cancellation_propagates(tools: BoundTools) -> None:
    async def scenario() -> None:
        HANGING.clear()
        task = asyncio.create_task(tools.execute(ToolCall(id="1", name="hang", arguments="{}")))
        await until(lambda: HANGING, "the tool to start")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())


def test_builtin_call_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hi\n")
    ctx, _ = make_ctx(tmp_path)
    arguments = json.dumps({"path": "hello.txt"})
    assert call(build_tools(ctx), "read_file", arguments) == "hi\n"
