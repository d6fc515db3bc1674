"""How fast the SSE path parses a streamed answer, in MB/s of response body.

Builds one large synthetic body of `chat.completion.chunk` events as an
OpenAI-compatible server sends them (text deltas of a few characters, a tool
call whose arguments arrive in fragments, a usage chunk, `data: [DONE]`) and
feeds it in pieces of 1, 4 and 16 KiB, as the network would deliver it, to:

- the decoder alone (`SSEDecoder.feed_bytes`);
- the whole path a streamed answer takes (`SSEDecoder` + JSON + `ReplyAssembler`
  through `handle_event`, with a sink that drops the deltas).

Each figure is the median of `--runs` passes over the body.

    .venv/bin/python bench/sse_throughput.py [--mb 8] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.daemon.providers.chunks import ReplyAssembler
from coding_harness.daemon.providers.openai_stream import handle_event
from coding_harness.daemon.providers.sse import SSEDecoder

ENDPOINT = "https://api.example.com/v1/chat/completions"
PIECE_SIZES = (1024, 4096, 16384)


class DropSink:
    def text_delta(self, text: str) -> None:
        pass

    def reasoning_delta(self, text: str) -> None:
        pass


def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-9Xb2",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_0ba0d124f1",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def synthetic_body(megabytes: float) -> bytes:
    """Text deltas of 1-15 characters until the size is reached, then a tool call, usage
    and `[DONE]`; about 270 bytes an event, as real servers send."""
    words = ["def", "total(values):\n", "return", "sum(v", "for", "v", "in", "values"]
    words += ["if", "v", ">", "0)", "#", "é,", "ü\n"]
    parts = [chunk({"role": "assistant", "content": ""})]
    size, n = 0, 0
    while size < megabytes * 1_000_000:
        piece = chunk({"content": words[n % len(words)] + " "})
        parts.append(piece)
        size += len(piece)
        n += 1
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_file"}}
    parts.append(
        chunk({"tool_calls": [{**call, "function": {"name": "read_file", "arguments": ""}}]})
    )
    for fragment in ('{"pa', 'th": "', 'calc.py"}'):
        parts.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}))
    parts.append(chunk({}, "tool_calls"))
    usage = {"prompt_tokens": 1200, "completion_tokens": n, "total_tokens": 1200 + n}
    parts.append(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def pieces_of(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def decode_only(pieces: list[bytes]) -> int:
    decoder = SSEDecoder()
    return sum(len(decoder.feed_bytes(piece)) for piece in pieces)


def whole_path(pieces: list[bytes]) -> int:
    decoder, assembler, sink = SSEDecoder(), ReplyAssembler(ENDPOINT), DropSink()
    events = 0
    for piece in pieces:
        for event in decoder.feed_bytes(piece):
            events += 1
            if handle_event(event, assembler, sink, ENDPOINT):
                reply = assembler.result()
                assert reply.tool_calls and reply.tool_calls[0].arguments == '{"path": "calc.py"}'
                return events
    raise AssertionError("the body ended before [DONE]")


def rate(work: Callable[[list[bytes]], int], pieces: list[bytes], runs: int) -> tuple[float, int]:
    """(median MB/s, events) over `runs` passes."""
    total = sum(len(p) for p in pieces)
    times, events = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        events = work(pieces)
        times.append(time.perf_counter() - start)
    return total / statistics.median(times) / 1_000_000, events


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=8.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    body = synthetic_body(args.mb)
    print(f"body: {len(body) / 1e6:.1f} MB, python {sys.version.split()[0]}")
    print("| piece | decoder alone | decoder + JSON + assembler | events/s (whole path) |")
    print("| --- | --- | --- | --- |")
    for size in PIECE_SIZES:
        pieces = pieces_of(body, size)
        decoded, _ = rate(decode_only, pieces, args.runs)
        whole, events = rate(whole_path, pieces, args.runs)
        per_second = events * whole * 1_000_000 / len(body)
        print(f"| {size // 1024} KiB | {decoded:.1f} MB/s | {whole:.1f} MB/s | {per_second:,.0f} |")


if __name__ == "__main__":
    main()
