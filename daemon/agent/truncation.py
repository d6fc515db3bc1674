"""Tool calls cut off at the output token limit, told apart from merely wrong ones.

A model that runs out of output tokens in the middle of a large write leaves
arguments with no closing quote or brace. Telling it to fix its JSON sends it
round in circles; what helps is to say the call was too big and to split it.
Two forms reach the loop:

- The reply holds a call whose arguments end inside a string or an open
  object or array, whatever `finish_reason` the server reported (some report
  `tool_calls` or `stop` at the token cap, some none at all), or, under
  `finish_reason == "length"`, any call whose arguments do not parse:
  `cut_off_ids` names those calls, which are answered with `CUT_OFF_RESULT`
  instead of being run. Arguments that are complete but wrong (an extra brace,
  a trailing comma before the end) still go to the tools, which say what is wrong.
- The server itself failed to parse the cut-off call (llama.cpp answers 500
  "Failed to parse tool call arguments"), so there is no reply and no call id
  to answer: `is_cut_off_error` spots that, and the loop adds the tool-less
  user message `CUT_OFF_RETRY` and asks once more.
"""

from __future__ import annotations

import json
import re

from coding_harness.daemon.agent.model_errors import (
    ModelBadRequest,
    ModelBadResponse,
    ModelError,
    ModelServerError,
)
from coding_harness.daemon.agent.seams import ModelReply, ToolCall

CUT_OFF_RESULT = (
    "Not run: this call was cut off. Your reply reached the output token limit before "
    "the call's arguments were complete, so nothing was written. The JSON syntax is not "
    "what went wrong, the size of the call is: do not send the same call again. Split the "
    "write into smaller calls instead, e.g. change one part of a file at a time with "
    "replace_text, or write a shorter file first and add to it with further edits."
)
CUT_OFF_RETRY = (
    "[harness note, not from the user] Your last reply was lost: the model server could "
    "not parse the tool call in it, most likely because the reply reached the output token "
    "limit in the middle of the call's arguments. Nothing was run. Do not repeat that call "
    "as it was. Split the write into smaller calls: replace_text on one part of a file, or "
    "a shorter file now and more edits afterwards."
)
EMPTY_ARGUMENTS = "{}"
_SERVER_PARSE_FAILURE = re.compile(
    r"(failed to|unable to|could not|cannot) parse.{0,80}?tool"
    r"|tool[ _]?call.{0,80}?(failed to parse|parse error|invalid json)",
    re.IGNORECASE | re.DOTALL,
)


def cut_off_ids(reply: ModelReply) -> set[str]:
    """Ids of the calls in `reply` whose arguments were cut off at the token limit."""
    if reply.finish_reason == "length":
        return {call.id for call in reply.tool_calls if not _parses(call.arguments)}
    return {call.id for call in reply.tool_calls if looks_cut_off(call.arguments)}


def looks_cut_off(arguments: str) -> bool:
    """True for JSON text that stops inside a string, an object or an array."""
    text = arguments.strip()
    if not text or _parses(text):
        return False
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return in_string or depth > 0 or text.endswith((",", ":"))


def without_cut_off_arguments(reply: ModelReply, cut: set[str]) -> ModelReply:
    """The reply as history keeps it: cut-off arguments replaced by `{}`.

    Servers that parse the arguments of earlier calls would choke on the broken
    JSON, and the half-written text is of no use to the model.
    """
    if not cut:
        return reply
    calls = [
        ToolCall(id=call.id, name=call.name, arguments=EMPTY_ARGUMENTS) if call.id in cut else call
        for call in reply.tool_calls
    ]
    return ModelReply(
        content=reply.content,
        reasoning=reply.reasoning,
        tool_calls=calls,
        finish_reason=reply.finish_reason,
        usage=reply.usage,
    )


def is_cut_off_error(error: ModelError) -> bool:
    """True when the server failed to parse a tool call, the sign of a cut-off one."""
    if not isinstance(error, ModelBadRequest | ModelServerError | ModelBadResponse):
        return False
    return _SERVER_PARSE_FAILURE.search(str(error)) is not None


def _parses(arguments: str) -> bool:
    try:
        json.loads(arguments)
    except ValueError:
        return False
    return True
