"""Tool calls cut off at the output token limit: told to split the write, not to fix JSON."""

from __future__ import annotations

import json

import pytest

from coding_harness.daemon.agent.history import repair_dangling
from coding_harness.daemon.agent.model_errors import (
    ModelBadRequest,
    ModelBadResponse,
    ModelError,
    ModelServerError,
)
from coding_harness.daemon.agent.seams import ModelReply, ToolCall
from coding_harness.daemon.agent.truncation import (
    CUT_OFF_RESULT,
    CUT_OFF_RETRY,
    is_cut_off_error,
    looks_cut_off,
)
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.errors import error_from_response
from tests.support.scripted_model import EchoTools, run_loop

CUT_WRITE = '{"path": "big.py", "old": "", "new": "def f():\\n    return \\"abc'
LLAMA_BODY = json.dumps(
    {
        "error": {
            "code": 500,
            "message": "Failed to parse tool call arguments as JSON: [json.exception.parse_error"
            ".101] parse error at line 1, column 4096: syntax error while parsing value - "
            "invalid string: missing closing quote",
            "type": "server_error",
        }
    }
)
PROFILE = ProviderProfile(
    name="local", type="openai", endpoint="http://localhost:8080/v1/chat/completions", model="m"
)


def write_call(arguments: str = CUT_WRITE, id: str = "w1") -> ToolCall:
    return ToolCall(id=id, name="propose_edit", arguments=arguments)


def llama_parse_failure() -> ModelError:
    return error_from_response(500, LLAMA_BODY, {}, PROFILE)


def test_a_call_cut_at_the_length_limit_is_answered_not_run() -> None:
    tools = EchoTools()
    script: list[ModelReply | Exception] = [
        ModelReply(tool_calls=[write_call()], finish_reason="length"),
        ModelReply(content="I will split it."),
    ]
    done = run_loop(script, tools)
    assert tools.calls == []
    assert done.tool_results() == [CUT_OFF_RESULT]
    assert CUT_OFF_RESULT == (
        "Not run: this call was cut off. Your reply reached the output token limit before the "
        "call's arguments were complete, so nothing was written. The JSON syntax is not what "
        "went wrong, the size of the call is: do not send the same call again. Split the write "
        "into smaller calls instead, e.g. change one part of a file at a time with "
        "replace_text, or write a shorter file first and add to it with further edits."
    )
    # History keeps valid JSON in place of the broken arguments, and every call answered.
    assistant = done.messages[2]
    assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
    assert repair_dangling(done.messages, "x") == 0
    assert done.model.payloads[1]["messages"][3]["content"] == CUT_OFF_RESULT
    assert done.result.reply == "I will split it."
    results = [data for kind, data in done.events.events if kind == "tool.result"]
    assert results == [
        {"id": "w1", "name": "propose_edit", "result": CUT_OFF_RESULT, "failed": True}
    ]


def test_complete_calls_in_the_same_reply_still_run() -> None:
    tools = EchoTools()
    read = ToolCall(id="r1", name="read_file", arguments='{"path": "a.py"}')
    script: list[ModelReply | Exception] = [
        ModelReply(tool_calls=[read, write_call(id="w2")], finish_reason="length"),
        ModelReply(content="ok"),
    ]
    done = run_loop(script, tools)
    assert [call.id for call in tools.calls] == ["r1"]
    assert done.tool_results() == ['result of read_file {"path": "a.py"}', CUT_OFF_RESULT]


def test_bad_json_without_the_length_limit_goes_to_the_tools() -> None:
    tools = EchoTools()
    script: list[ModelReply | Exception] = [
        ModelReply(tool_calls=[write_call('{"path": "a.py",}')], finish_reason="tool_calls"),
        ModelReply(content="ok"),
    ]
    run_loop(script, tools)
    assert [call.arguments for call in tools.calls] == ['{"path": "a.py",}']


def test_without_a_finish_reason_only_cut_off_looking_json_counts() -> None:
    tools = EchoTools()
    script: list[ModelReply | Exception] = [
        ModelReply(tool_calls=[write_call()]),
        ModelReply(tool_calls=[write_call('{"path": "a.py"}}', id="w3")]),
        ModelReply(content="ok"),
    ]
    done = run_loop(script, tools)
    assert done.tool_results()[0] == CUT_OFF_RESULT
    assert [call.id for call in tools.calls] == ["w3"]


@pytest.mark.parametrize(
    ("arguments", "cut"),
    [
        ('{"path": "a', True),
        ('{"path": "a", "new": {"x": [1, 2', True),
        ('{"path": "a",', True),
        ('{"path":', True),
        ('{"new": "escaped \\" quote', True),
        ('{"path": "a"}', False),
        ('{"path": "a"}}', False),
        ("not json", False),
        ("", False),
    ],
)
def test_looks_cut_off(arguments: str, cut: bool) -> None:
    assert looks_cut_off(arguments) is cut


def test_a_server_that_failed_to_parse_the_call_gets_one_corrective_retry() -> None:
    script: list[ModelReply | Exception] = [llama_parse_failure(), ModelReply(content="Split.")]
    done = run_loop(script)
    assert done.result.reply == "Split."
    assert done.messages[2] == {"role": "user", "content": CUT_OFF_RETRY}
    assert CUT_OFF_RETRY == (
        "[harness note, not from the user] Your last reply was lost: the model server could "
        "not parse the tool call in it, most likely because the reply reached the output token "
        "limit in the middle of the call's arguments. Nothing was run. Do not repeat that call "
        "as it was. Split the write into smaller calls: replace_text on one part of a file, or "
        "a shorter file now and more edits afterwards."
    )
    retry = done.model.payloads[1]
    assert retry["messages"][-1]["content"] == CUT_OFF_RETRY
    assert "tools" in retry  # the model may call tools again, just smaller ones
    notices = [data["message"] for kind, data in done.events.events if kind == "notice"]
    assert notices == [
        "the model's tool call was cut off at its output limit; asking it to split it"
    ]


def test_the_retry_happens_once_then_the_error_ends_the_turn() -> None:
    with pytest.raises(ModelBadRequest, match="Failed to parse tool call"):
        run_loop([llama_parse_failure(), llama_parse_failure(), ModelReply(content="never")])


def test_other_server_errors_are_not_retried() -> None:
    other = error_from_response(500, '{"error": {"message": "out of memory"}}', {}, PROFILE)
    assert not is_cut_off_error(other)
    with pytest.raises(ModelServerError, match="out of memory"):
        run_loop([other, ModelReply(content="never")])


def test_a_bad_response_naming_the_parse_failure_counts_too() -> None:
    error = ModelBadResponse(
        "bad answer from local: could not parse tool call arguments", endpoint="http://x"
    )
    assert is_cut_off_error(error)
    assert run_loop([error, ModelReply(content="ok")]).result.reply == "ok"


@pytest.mark.parametrize("finish_reason", ["tool_calls", "stop", "function_call", "end_turn"])
def test_a_cut_off_call_counts_whatever_finish_reason_the_server_reports(
    finish_reason: str,
) -> None:
    # Some servers report `tool_calls` or `stop` when a call hits the token cap.
    tools = EchoTools()
    script: list[ModelReply | Exception] = [
        ModelReply(tool_calls=[write_call()], finish_reason=finish_reason),
        ModelReply(content="I will split it."),
    ]
    done = run_loop(script, tools)
    assert tools.calls == []
    assert done.tool_results() == [CUT_OFF_RESULT]
    assert done.messages[2]["tool_calls"][0]["function"]["arguments"] == "{}"


def test_under_another_finish_reason_json_that_is_merely_wrong_still_runs() -> None:
    tools = EchoTools()
    script: list[ModelReply | Exception] = [
        ModelReply(tool_calls=[write_call('{"path": "a.py"}}')], finish_reason="stop"),
        ModelReply(content="ok"),
    ]
    run_loop(script, tools)
    assert [call.arguments for call in tools.calls] == ['{"path": "a.py"}}']
