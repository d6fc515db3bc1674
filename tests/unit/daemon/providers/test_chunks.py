"""ReplyAssembler and reply_from_completion, over real captured wire fixtures.

The fixtures live in the shared folder next to the repository
(`../shared/fixtures/sse/`, see its INDEX.md); they are read in place, never
copied, and the tests that need them skip when the folder is absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.agent.model_errors import ModelBadResponse
from coding_harness.daemon.agent.seams import ModelReply, ToolCall, Usage
from coding_harness.daemon.providers.chunks import ReplyAssembler, reply_from_completion
from coding_harness.daemon.providers.openai_stream import handle_event
from coding_harness.daemon.providers.sse import SSEDecoder
from tests.support.sinks import RecordingSink

FIXTURES = Path(__file__).resolve().parents[5] / "shared" / "fixtures" / "sse"
ENDPOINT = "https://models.example/v1/chat/completions"


@dataclass
class Replayed:
    reply: ModelReply
    sink: RecordingSink
    saw_done: bool


def fixture_path(name: str) -> Path:
    path = FIXTURES / name
    if not path.is_file():
        pytest.skip(f"shared fixture {name} is not available at {FIXTURES}")
    return path


def replay_stream(name: str, sink: RecordingSink | None = None) -> Replayed:
    """Run a captured SSE body through the decoder and assembler, as the client does."""
    sink = sink if sink is not None else RecordingSink()
    decoder = SSEDecoder()
    assembler = ReplyAssembler(ENDPOINT)
    for event in decoder.feed_bytes(fixture_path(name).read_bytes()) + decoder.close():
        if handle_event(event, assembler, sink, ENDPOINT):
            return Replayed(assembler.result(), sink, saw_done=True)
    return Replayed(assembler.result(), sink, saw_done=False)


def load_completion(name: str) -> ModelReply:
    return reply_from_completion(json.loads(fixture_path(name).read_text()), ENDPOINT)


def args(call: ToolCall) -> Any:
    return json.loads(call.arguments)


# --- streamed fixtures -------------------------------------------------------------


def test_openai_streamed_tool_call_with_usage_chunk() -> None:
    run = replay_stream("openai-gpt4o-mini-stream-tool-call-usage.sse")
    assert run.saw_done
    assert run.reply.content == ""
    assert run.reply.tool_calls == [
        ToolCall(
            id="call_ZR5UUuTt3pf61kjwAJIYdVMj", name="get_capital", arguments='{"country":"UK"}'
        )
    ]
    assert run.reply.finish_reason == "tool_calls"
    assert run.reply.usage == Usage(prompt_tokens=53, cached_tokens=0, completion_tokens=15)
    assert run.sink.text == []


def test_openai_parallel_tool_calls_keep_their_order() -> None:
    reply = replay_stream("openai-gpt4o-stream-parallel-tool-calls.sse").reply
    assert [(c.id, c.name, args(c)) for c in reply.tool_calls] == [
        ("call_q2UyBRP7eXNTzAoR8lEhjc9Z", "get_country", {}),
        ("call_b51ijcpFkDiTQG1bQzsrmtW5", "get_product_name", {}),
    ]
    assert reply.usage == Usage(prompt_tokens=364, completion_tokens=40)


def test_text_then_tool_call_streams_the_text() -> None:
    run = replay_stream("openai-gpt4o-stream-text-then-tool-call.sse")
    assert run.reply.content == "PRE_TOOL"
    assert run.sink.text == ["PRE", "_TOOL"]
    assert [(c.name, args(c)) for c in run.reply.tool_calls] == [("weather", {})]


def test_sparse_tool_index_and_empty_argument_fragments() -> None:
    run = replay_stream("anthropic-compat-gateway-stream-tool-call-index-1.sse")
    assert run.reply.content == "Reading it."
    assert len(run.reply.tool_calls) == 1
    call = run.reply.tool_calls[0]
    assert (call.id, call.name, args(call)) == ("toolu_sanitized", "read_file", {"path": "a.txt"})
    assert run.reply.finish_reason == "tool_calls"
    assert run.reply.usage is None


def test_deepseek_reasoning_is_kept_apart_with_cache_hits() -> None:
    run = replay_stream("deepseek-reasoner-stream-tool-call-reasoning.sse")
    reply = run.reply
    assert reply.reasoning.startswith("The user is asking for the weather in San Francisco.")
    assert reply.content == ""
    assert "".join(run.sink.reasoning) == reply.reasoning
    assert run.sink.text == []
    [call] = reply.tool_calls
    assert (call.id, call.name) == ("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather")
    assert args(call) == {"location": "San Francisco"}
    assert reply.usage == Usage(prompt_tokens=339, cached_tokens=320, completion_tokens=83)


def test_deepseek_reasoning_then_answer() -> None:
    run = replay_stream("deepseek-reasoner-stream-reasoning-usage.sse")
    assert run.reply.content == "Hello there! 😊 How can I help you today?"
    assert run.reply.reasoning.startswith('Hmm, the user just said "Hello".')
    assert run.reply.content not in run.reply.reasoning
    assert run.reply.finish_reason == "stop"
    assert run.reply.usage == Usage(prompt_tokens=6, cached_tokens=0, completion_tokens=212)


def test_xai_reasoning_whole_tool_call_and_cached_tokens() -> None:
    reply = replay_stream("xai-grok3mini-stream-tool-call-reasoning-usage.sse").reply
    assert reply.reasoning.startswith("First, the user is asking about the weather")
    [call] = reply.tool_calls
    assert (call.id, call.name, args(call)) == (
        "call_79382389",
        "weather",
        {"location": "San Francisco"},
    )
    assert reply.usage == Usage(prompt_tokens=307, cached_tokens=306, completion_tokens=26)


def test_groq_reasoning_field_and_usage_on_finish_chunk() -> None:
    run = replay_stream("groq-gpt-oss-stream-tool-call-usage.sse")
    assert run.reply.reasoning.startswith("We need to call the function")
    assert run.reply.content == ""
    [call] = run.reply.tool_calls
    assert call.name == "get_something_by_name"
    assert args(call) == {"name": "example"}
    assert run.reply.usage == Usage(prompt_tokens=304, completion_tokens=49)


def test_groq_error_event_without_done_is_surfaced() -> None:
    sink = RecordingSink()
    with pytest.raises(ModelBadResponse) as caught:
        replay_stream("groq-gpt-oss-stream-error-tool-use-failed.sse", sink)
    assert "tool_use_failed" in caught.value.message
    assert "Tool call validation failed" in caught.value.message
    assert ENDPOINT in caught.value.message
    assert sink.reasoning  # the reasoning before the error was streamed


def test_openrouter_error_object_inside_a_chunk() -> None:
    sink = RecordingSink()
    with pytest.raises(ModelBadResponse, match="Token limit reached"):
        replay_stream("openrouter-minimax-stream-error-in-chunk.sse", sink)
    assert "".join(sink.reasoning).startswith("We need to respond to a greeting.")


def test_dashscope_empty_id_fragments_keep_the_first_id() -> None:
    reply = replay_stream("qwen-dashscope-stream-tool-call-empty-id-fragments.sse").reply
    [call] = reply.tool_calls
    assert call.id == "call_eee11723464a4b9eb8cee71d"
    assert call.name == "weather"
    assert args(call) == {"location": "San Francisco"}
    assert reply.usage == Usage(prompt_tokens=295, completion_tokens=22)


def test_repeated_name_in_every_fragment_is_not_doubled() -> None:
    run = replay_stream("openrouter-novita-kimi-stream-tool-call-repeated-name.sse")
    [call] = run.reply.tool_calls
    assert (call.id, call.name, call.arguments) == ("0", "llm_version", "{}")
    assert run.saw_done
    assert run.reply.finish_reason is None  # this server never sends one
    assert run.reply.usage == Usage(prompt_tokens=57, completion_tokens=17)


def test_missing_arguments_key_counts_as_empty() -> None:
    reply = replay_stream("openrouter-novita-kimi-stream-tool-call-no-arguments-key.sse").reply
    [call] = reply.tool_calls
    assert (call.id, call.name, call.arguments) == ("llm_version:0", "llm_version", "{}")
    assert reply.finish_reason == "tool_calls"
    assert reply.usage == Usage(prompt_tokens=56, completion_tokens=12)


def test_vllm_first_fragment_without_arguments() -> None:
    reply = replay_stream("vllm-qwen25-stream-tool-call.sse").reply
    [call] = reply.tool_calls
    assert call.id == "chatcmpl-tool-ca99dda515524c6abe47d1ea22813507"
    assert (call.name, args(call)) == ("run_command", {"command": "ls"})
    assert reply.usage is None


def test_ollama_parallel_whole_calls_without_done() -> None:
    run = replay_stream("ollama-qwen25coder-stream-parallel-tool-calls.sse")
    assert not run.saw_done
    assert run.reply.finish_reason == "tool_calls"
    assert [(c.id, args(c)) for c in run.reply.tool_calls] == [
        ("call_wteop8bt", {"command": "ls"}),
        ("call_rk2xye1l", {"command": "ls -l"}),
    ]


def test_llamacpp_leaked_markup_stays_text_and_call_is_parsed() -> None:
    reply = replay_stream("llamacpp-qwen3coder-stream-content-leak-then-tool-call.sse").reply
    assert reply.content.startswith("Hi there! Let me check the current weather")
    assert "<tool_call>" in reply.content
    [call] = reply.tool_calls
    assert (call.name, args(call)) == ("get_current_weather", {"location": "Washington DC"})
    assert reply.usage is None  # llama.cpp sent `timings`, not usage


def test_azure_prompt_filter_chunk_without_choices() -> None:
    reply = replay_stream("azure-openai-gpt5nano-stream-prompt-filter-first-chunk.sse").reply
    assert reply.content == "Capital of Denmark."
    assert reply.finish_reason == "stop"
    assert reply.usage == Usage(prompt_tokens=15, completion_tokens=78)


def test_openrouter_usage_after_finish_keeps_finish_reason() -> None:
    reply = replay_stream("openrouter-fireworks-kimi-stream-text-usage.sse").reply
    assert reply.content == "The installed version of LLM on this system is 0.26."
    assert reply.finish_reason == "stop"
    assert reply.usage == Usage(prompt_tokens=105, completion_tokens=16)


def test_vllm_usage_chunk_with_empty_choices() -> None:
    reply = replay_stream("vllm-crusoe-llama33-stream-usage.sse").reply
    assert reply.content == "1, 2, 3, 4, 5"
    assert reply.usage == Usage(prompt_tokens=46, completion_tokens=14)


def test_together_think_tags_stay_in_content_and_usage_on_finish() -> None:
    reply = replay_stream("together-deepseek-r1-stream-think-in-content-usage.sse").reply
    assert reply.content.startswith("<think>\n")
    assert reply.reasoning == ""
    assert reply.finish_reason == "stop"
    assert reply.usage == Usage(prompt_tokens=10, cached_tokens=0, completion_tokens=955)


# --- non-streaming fixtures ----------------------------------------------------------


def test_completion_deepseek_reasoning_and_cached_tokens() -> None:
    reply = load_completion("deepseek-reasoner-tool-call.json")
    assert reply.content == ""
    assert reply.reasoning.startswith("The user is asking for the weather in San Francisco.")
    [call] = reply.tool_calls
    assert (call.id, call.name) == ("call_00_9V0vrf86Pc9aelHCJMZqnJBo", "weather")
    assert args(call) == {"location": "San Francisco"}
    assert reply.usage == Usage(prompt_tokens=339, cached_tokens=320, completion_tokens=92)


def test_completion_openai_cached_tokens() -> None:
    reply = load_completion("openai-gpt4o-mini-cached-tokens.json")
    assert reply.content == "ok"
    assert reply.finish_reason == "stop"
    assert reply.usage == Usage(prompt_tokens=10122, cached_tokens=9984, completion_tokens=1)


def test_completion_mlx_without_content_key() -> None:
    reply = load_completion("mlxlm-server-tool-call-no-content-key.json")
    assert reply.content == ""
    [call] = reply.tool_calls
    assert (call.name, args(call)) == ("get_weather", {"city": "Basel"})
    assert call.id == "c2bccd6f-16a9-40b1-b298-0945778d5c18"
    assert reply.usage == Usage(prompt_tokens=280, completion_tokens=27)


def test_completion_lmstudio_plain_answer_with_empty_tool_calls() -> None:
    reply = load_completion("lmstudio-qwen25coder-plain-answer-empty-tool-calls.json")
    assert reply.content.startswith("Waves crash on shore,\n")
    assert reply.tool_calls == []
    assert reply.reasoning == ""
    assert reply.to_message() == {"role": "assistant", "content": reply.content}


def test_completion_lmstudio_numeric_looking_id() -> None:
    [call] = load_completion("lmstudio-qwen3-tool-call.json").tool_calls
    assert (call.id, call.name, args(call)) == ("737676769", "get_weather", {"location": "Tokyo"})


@pytest.mark.parametrize(
    ("name", "tool", "arguments"),
    [
        (
            "together-deepseek-r1-tool-call-content-null.json",
            "final_result",
            {"response": [2, 3, 5]},
        ),
        ("vllm-crusoe-glm-tool-call-content-null.json", "get_weather", {"city": "Paris"}),
        (
            "ollama-cloud-gptoss-tool-call.json",
            "final_result",
            {"city": "Paris", "country": "France"},
        ),
        (
            "openrouter-mistral-small-tool-call.json",
            "divide",
            {"numerator": 123, "denominator": 456, "on_inf": "infinity"},
        ),
    ],
)
def test_completion_tool_calls_with_null_or_empty_content(
    name: str, tool: str, arguments: dict[str, Any]
) -> None:
    reply = load_completion(name)
    assert reply.content == ""
    [call] = reply.tool_calls
    assert (call.name, args(call)) == (tool, arguments)
    assert reply.finish_reason == "tool_calls"


def test_completion_reasoning_field_is_kept_apart() -> None:
    reply = load_completion("vllm-crusoe-glm-tool-call-content-null.json")
    assert reply.reasoning.startswith("The user wants to know the weather in Paris.")
    assert reply.usage == Usage(prompt_tokens=167, completion_tokens=37)


def test_completion_error_body_is_a_bad_response() -> None:
    with pytest.raises(ModelBadResponse, match="does not exist"):
        load_completion("openai-404-model-not-found.json")


# --- synthetic chunks: quirks no fixture shows -------------------------------------------


def chunk(delta: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"object": "chat.completion.chunk", **extra}
    if delta is not None:
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
    return body


def assemble(*chunks: dict[str, Any]) -> tuple[ModelReply, RecordingSink]:
    sink = RecordingSink()
    assembler = ReplyAssembler(ENDPOINT)
    for item in chunks:
        assembler.add(item, sink)
    return assembler.result(), sink


def test_content_null_and_empty_are_not_forwarded() -> None:
    reply, sink = assemble(
        chunk({"content": None}), chunk({"content": ""}), chunk({"content": "a"})
    )
    assert reply.content == "a"
    assert sink.text == ["a"]


def test_reasoning_content_wins_over_duplicate_reasoning() -> None:
    reply, sink = assemble(chunk({"reasoning_content": "think", "reasoning": "think"}))
    assert reply.reasoning == "think"
    assert sink.reasoning == ["think"]


def test_call_without_id_gets_a_generated_one() -> None:
    reply, _ = assemble(
        chunk({"tool_calls": [{"index": 0, "function": {"name": "ls", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "pwd"}}]}),
    )
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_0", "ls", "{}"),
        ("b", "pwd", ""),
    ]


def test_tool_calls_sorted_by_index_even_when_interleaved() -> None:
    reply, _ = assemble(
        chunk(
            {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "two", "arguments": "{"}}]}
        ),
        chunk(
            {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "one", "arguments": "{"}}]}
        ),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": "}"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
    )
    assert [(c.id, c.arguments) for c in reply.tool_calls] == [("a", "{}"), ("b", "{}")]


def test_fragments_without_index_follow_their_ids() -> None:
    reply, _ = assemble(
        chunk({"tool_calls": [{"id": "a", "function": {"name": "one", "arguments": '{"x"'}}]}),
        chunk({"tool_calls": [{"function": {"arguments": ": 1}"}}]}),
        chunk({"tool_calls": [{"id": "b", "function": {"name": "two", "arguments": "{}"}}]}),
    )
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("a", "one", '{"x": 1}'),
        ("b", "two", "{}"),
    ]


def test_arguments_sent_as_an_object_are_serialized() -> None:
    reply, _ = assemble(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "a", "function": {"name": "f", "arguments": {"k": "é"}}}
                ]
            }
        )
    )
    assert json.loads(reply.tool_calls[0].arguments) == {"k": "é"}


def test_later_null_finish_reason_does_not_erase_the_first() -> None:
    reply, _ = assemble(
        {"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "length"}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": None}]},
    )
    assert reply.finish_reason == "length"


def test_other_choices_are_ignored() -> None:
    reply, _ = assemble({"choices": [{"index": 1, "delta": {"content": "other"}}]})
    assert reply.content == ""


def test_deepseek_cache_hit_tokens_without_details() -> None:
    reply, _ = assemble(
        {
            "choices": [],
            "usage": {"prompt_tokens": 100, "completion_tokens": 5, "prompt_cache_hit_tokens": 64},
        }
    )
    assert reply.usage == Usage(prompt_tokens=100, cached_tokens=64, completion_tokens=5)


def test_usage_null_chunks_do_not_reset_usage() -> None:
    reply, _ = assemble(
        {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}},
        chunk({"content": ""}, usage=None),
    )
    assert reply.usage == Usage(prompt_tokens=3, completion_tokens=4)


def test_error_object_inside_a_chunk_raises() -> None:
    with pytest.raises(ModelBadResponse) as caught:
        assemble(chunk({"content": "a"}), {"error": {"message": "overloaded", "code": 502}})
    assert "overloaded" in caught.value.message
    assert caught.value.endpoint == ENDPOINT


def test_finished_is_false_until_a_finish_reason() -> None:
    assembler = ReplyAssembler(ENDPOINT)
    assembler.add(chunk({"content": "a"}), RecordingSink())
    assert not assembler.finished
    assembler.add(
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, RecordingSink()
    )
    assert assembler.finished


# --- reply_from_completion edge cases ---------------------------------------------------


def completion(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], **extra}


def test_completion_arguments_as_object_are_reserialized() -> None:
    reply = reply_from_completion(
        completion(
            {"content": None, "tool_calls": [{"function": {"name": "f", "arguments": {"a": [1]}}}]}
        )
    )
    [call] = reply.tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == ("call_0", "f", {"a": [1]})


def test_completion_content_parts_are_joined() -> None:
    reply = reply_from_completion(
        completion({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})
    )
    assert reply.content == "ab"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"choices": []},
        {"choices": [{"index": 0}]},
        {"choices": [{"index": 0, "message": "text"}]},
        {"object": "error", "message": "flat error without choices"},
    ],
)
def test_completion_without_a_message_is_a_bad_response(body: dict[str, Any]) -> None:
    with pytest.raises(ModelBadResponse, match=r"choices\[0\]\.message"):
        reply_from_completion(body, ENDPOINT)
