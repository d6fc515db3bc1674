"""Tool calls written as text: each form small models and broken templates produce."""

from __future__ import annotations

import json

import pytest

from coding_harness.daemon.agent.text_calls import calls_in_text, may_hold_calls

OFFERED = ["read_file", "list_dir", "replace_text"]


@pytest.mark.parametrize(
    "content",
    [
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "calc.py"}}\n</tool_call>',
        '<tool_call>{"name": "read_file", "arguments": {"path": "calc.py"}}',  # no closing tag
        '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "calc.py"}}]',
        '[TOOL_CALLS]read_file[ARGS]{"path": "calc.py"}',
        '<|python_tag|>{"name": "read_file", "parameters": {"path": "calc.py"}}<|eom_id|>',
        '{"name": "read_file", "arguments": {"path": "calc.py"}}',
        '```json\n{"name": "read_file", "arguments": "{\\"path\\": \\"calc.py\\"}"}\n```',
        '{"type": "function", "function": {"name": "read_file", "arguments": {"path": "calc.py"}}}',
    ],
)
def test_each_form_becomes_the_call(content: str) -> None:
    found = calls_in_text(content, OFFERED)
    assert found is not None
    (call,) = found.calls
    assert call.name == "read_file" and json.loads(call.arguments) == {"path": "calc.py"}
    assert found.text == ""


def test_several_calls_and_the_words_around_them() -> None:
    content = (
        "Let me look.\n"
        '<tool_call>{"name": "list_dir", "arguments": {"path": "."}}</tool_call>\n'
        '<tool_call>{"name": "read_file", "arguments": {"path": "calc.py"}}</tool_call>'
    )
    found = calls_in_text(content, OFFERED)
    assert found is not None
    assert [c.name for c in found.calls] == ["list_dir", "read_file"]
    assert found.text == "Let me look."
    assert found.calls[0].id != found.calls[1].id


@pytest.mark.parametrize(
    "content",
    [
        "The bug is in div: it multiplies.",
        '{"name": "delete_everything", "arguments": {}}',  # not offered
        '<tool_call>{"name": "fetch_url", "arguments": {"url": "x"}}</tool_call>',
        '{"result": 4}',  # JSON, but no call
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
        '<tool_call>{"name": "fetch_url", "arguments": {"url": "x"}}</tool_call>',
    ],
)
def test_text_that_calls_no_offered_tool_stays_the_reply(content: str) -> None:
    assert calls_in_text(content, OFFERED) is None


def test_only_replies_that_may_be_calls_are_held_back() -> None:
    assert may_hold_calls("<tool")
    assert may_hold_calls('{"name"')
    assert may_hold_calls("```js")
    assert not may_hold_calls("The bug")
    assert not may_hold_calls("```python")
