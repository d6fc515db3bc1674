"""How late a page sees the model's text through `harness web`.

A fake model streams each turn's answer in 7-character pieces, `--gap-ms`
apart (as a model generating tokens does; `0` sends them all at once, which
measures queueing), and stamps each piece with `time.time()` as it writes it.
A page's client, an aiohttp WebSocket in this process, logged in with the
printed token like a browser, follows the session's event stream from a real
`harness web` on a real daemon and stamps each `text.delta` frame as it
arrives. Each model piece is paired with the first frame by which the page's
text holds it (so a daemon that joined pieces is still counted right), and the
bench prints the median, p90 and max of (page arrival - model write), and of
(page arrival - the daemon's emit time `at`). Target (issue 29): a median under
20 ms on loopback. Everything runs in a temporary HOME and socket, stopped at
the end. Nothing timed is asserted; a page text that differs from the model's is.

    .venv/bin/python bench/web_latency.py [--turns 3] [--pieces 150] [--gap-ms 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.fake_model_server import Reply, start_stream, stream_chunks, write_piece
from tests.support.processes import client
from tests.support.web_bridge import WebStack, web_stack


@dataclass
class StampedReply:
    """A streamed `Reply` whose pieces leave `gap` seconds apart, each write stamped."""

    reply: Reply
    gap: float
    written: list[tuple[float, str]] = field(default_factory=list)

    def perform(self, handler: BaseHTTPRequestHandler, released: threading.Event) -> None:
        start_stream(handler)
        for chunk in stream_chunks(self.reply):
            write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
            choices = chunk.get("choices") or [{}]
            text = (choices[0].get("delta") or {}).get("content")
            if text:
                self.written.append((time.time(), text))
            if self.gap and released.wait(self.gap):
                return
        write_piece(handler, b"data: [DONE]\n\n")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


def answer(turn: int, pieces: int) -> str:
    return "".join(f"{turn}{i:04d}, " for i in range(pieces))


async def follow(
    stack: WebStack, session: str, turns: int, ready: asyncio.Event
) -> list[tuple[float, float, str]]:
    """(arrival, daemon emit, text) of each text.delta the page gets, for `turns` turns."""
    frames: list[tuple[float, float, str]] = []
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(stack.base, params={"token": stack.token}) as login:
            login.raise_for_status()
        url = f"{stack.base}s/{session}/events?since=0"
        async with http.ws_connect(url, headers={"Origin": stack.origin}) as ws:
            finished = 0
            async for message in ws:
                arrived = time.time()
                frame = json.loads(message.data)
                if frame["type"] == "attached":
                    ready.set()
                if frame["type"] != "event":
                    continue
                if frame["kind"] == "text.delta":
                    frames.append((arrived, frame["at"], frame["data"]["text"]))
                elif frame["kind"] == "turn.finished":
                    finished += 1
                    if finished == turns:
                        return frames
    raise RuntimeError("the event stream closed early")


def delays(
    written: list[tuple[float, str]], frames: list[tuple[float, float, str]]
) -> tuple[list[float], list[float]]:
    """Per model piece: (page arrival - model write) and (page arrival - daemon emit), ms."""
    model_text = "".join(text for _, text in written)
    page_text = "".join(text for _, _, text in frames)
    if model_text != page_text:
        raise AssertionError(
            f"the page saw {len(page_text)} characters, the model sent {len(model_text)}"
        )
    from_model, from_daemon = [], []
    frame_index, page_length, sent_length = 0, 0, 0
    for wrote, text in written:
        sent_length += len(text)
        while page_length < sent_length:
            page_length += len(frames[frame_index][2])
            frame_index += 1
        arrived, emitted, _ = frames[frame_index - 1]
        from_model.append((arrived - wrote) * 1000)
        from_daemon.append((arrived - emitted) * 1000)
    return from_model, from_daemon


def spread(label: str, values: list[float]) -> str:
    p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
    return (
        f"  {label}: median {statistics.median(values):6.2f} ms, p90 {p90:6.2f} ms, "
        f"max {max(values):7.2f} ms"
    )


async def run(stack: WebStack, turns: int, pieces: int, gap: float) -> None:
    with client(stack.sandbox.socket, "bench", approvals=False) as conn:
        session = conn.request("session.create", {"cwd": str(stack.sandbox.workspace)})["session"]
        replies = [StampedReply(Reply(content=answer(t, pieces)), gap) for t in range(turns)]
        stack.model.add(*replies)
        ready = asyncio.Event()
        page = asyncio.create_task(follow(stack, session, turns, ready))
        await asyncio.wait_for(ready.wait(), 30)
        for turn in range(turns):
            conn.request("session.submit", {"session": session, "text": f"turn {turn}"})
        frames = await asyncio.wait_for(page, 300)
    written = [piece for reply in replies for piece in reply.written]
    from_model, from_daemon = delays(written, frames)
    print(f"{turns} turns of {pieces} pieces, {gap * 1000:g} ms apart: {len(frames)} frames")
    print(spread("model write -> page", from_model))
    print(spread("daemon emit -> page", from_daemon))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--pieces", type=int, default=150)
    parser.add_argument("--gap-ms", type=float, default=5.0)
    options = parser.parse_args()
    with web_stack() as stack:
        asyncio.run(run(stack, options.turns, options.pieces, options.gap_ms / 1000))


if __name__ == "__main__":
    main()
