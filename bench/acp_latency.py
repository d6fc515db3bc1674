"""How late an editor sees the model's text through `harness acp`, and how fast it starts.

Latency: a fake model streams each turn's answer in 7-character pieces (one
`text.delta` event each), either paced (`--gap-ms` between pieces, as a model
generating tokens does) or all at once (`--gap-ms 0`, a burst that measures
queueing). A raw daemon client attached to the same session records each
`text.delta` event's `at` (the daemon's emit time, epoch seconds) and when it
read it; the ACP SDK's client, driving a real `harness acp` from this process,
records `time.time()` when each `agent_message_chunk` line arrives (the SDK's
stream observer, before its own dispatch). The two lists are paired in order,
their texts checked equal, and the bench prints median, p90 and max of (ACP
arrival - daemon emit) next to the raw client's own (arrival - emit). Target
(issue 13): median 5 ms or under. The raw client reads on a thread of this
process, so both share its interpreter, and both share the machine with the
daemon and the bridge.

Start-up: the time from spawning `harness acp` to its `initialize` answer
against a warm daemon (median of `--starts` runs after one warm-up), next to
the bare interpreter and the interpreter importing the ACP SDK (which loads the
schema's pydantic models), each timed to the first byte it prints.

Everything runs in a temporary HOME and socket with bytecode cached in a
temporary prefix; the daemon and the fake model server are stopped at the end.
Nothing timed is asserted; a mismatch of the two event lists is.

    .venv/bin/python bench/acp_latency.py [--turns 3] [--pieces 150] [--gap-ms 5]
                                          [--starts 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp.connection import StreamDirection, StreamEvent

from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import (
    FakeModelServer,
    Reply,
    start_stream,
    stream_chunks,
    write_piece,
)
from tests.support.processes import client, start_daemon, stop_daemon


@dataclass
class PacedReply:
    """A streamed `Reply` whose pieces leave `gap` seconds apart, as tokens do."""

    reply: Reply
    gap: float

    def perform(self, handler: BaseHTTPRequestHandler, released: threading.Event) -> None:
        start_stream(handler)
        for chunk in stream_chunks(self.reply):
            write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
            if released.wait(self.gap):
                return
        write_piece(handler, b"data: [DONE]\n\n")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


@dataclass
class TimedEditor(Editor):
    """An `Editor` that stamps each agent_message_chunk as its line arrives."""

    chunks: list[tuple[float, str]] = field(default_factory=list)

    def observe(self, event: StreamEvent) -> None:
        arrived = time.time()
        if event.direction != StreamDirection.INCOMING:
            return
        message = event.message
        update = (message.get("params") or {}).get("update") or {}
        is_update = message.get("method") == "session/update"
        if is_update and update.get("sessionUpdate") == "agent_message_chunk":
            self.chunks.append((arrived, update["content"]["text"]))


@dataclass
class RawListener:
    """A daemon client on a thread: each text.delta's (emit, arrival, text)."""

    socket_path: Path
    session: str
    turns: int
    deltas: list[tuple[float, float, str]] = field(default_factory=list)
    ready: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with client(self.socket_path, "bench-raw", approvals=False) as conn:
            conn.request("session.attach", {"session": self.session})
            self.ready.set()
            finished = 0
            while finished < self.turns:
                note = conn.next_notification(timeout=60)
                arrived = time.time()
                if note is None:
                    raise TimeoutError("the raw client heard nothing for 60 s")
                params = note["params"]
                if params["kind"] == "text.delta":
                    self.deltas.append((params["at"], arrived, params["data"]["text"]))
                elif params["kind"] == "turn.finished":
                    finished += 1


def answer(turn: int, pieces: int) -> str:
    """`pieces` distinct 7-character pieces, as the fake server cuts them."""
    return "".join(f"{turn}{i:04d}, " for i in range(pieces))


def sandbox(root: Path) -> dict[str, str]:
    for name in ("home", "ws"):
        (root / name).mkdir()
    kept = ("CODING_", "XDG_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(kept)}
    env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
    env.update(
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(root / "run" / "harnessd.sock"),
        CODING_HARNESS_PROBE_PORTS="none",
        PYTHONPYCACHEPREFIX=str(root / "pycache"),
    )
    return env


async def stream_turns(
    env: dict[str, str], ws: Path, turns: int
) -> tuple[TimedEditor, RawListener]:
    """`turns` prompts from an ACP client while a raw client listens on the same session."""
    editor = TimedEditor()
    socket_path = Path(env["CODING_HARNESS_SOCKET"])
    async with open_editor(env, ws, editor) as conn:
        session = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        raw = RawListener(socket_path=socket_path, session=session, turns=turns)
        thread = threading.Thread(target=raw.run, daemon=True)
        thread.start()
        if not await asyncio.to_thread(raw.ready.wait, 30):
            raise TimeoutError("the raw client did not attach")
        for turn in range(turns):
            prompt: list[Any] = text_prompt(f"turn {turn}")
            done = await conn.prompt(session_id=session, prompt=prompt)
            if done.stop_reason != "end_turn":
                raise RuntimeError(f"turn {turn} ended {done.stop_reason}")
        await asyncio.to_thread(thread.join, 60)
    return editor, raw


def paired(editor: TimedEditor, raw: RawListener) -> tuple[list[float], list[float]]:
    """(ACP arrival - emit) and (raw arrival - emit) per delta, in ms, texts checked."""
    acp_texts = [text for _, text in editor.chunks]
    raw_texts = [text for _, _, text in raw.deltas]
    if acp_texts != raw_texts:
        raise AssertionError(
            f"the editor saw {len(acp_texts)} chunks, the raw client {len(raw_texts)} deltas,"
            " and they differ"
        )
    acp_ms = [
        (got - at) * 1000 for (got, _), (at, _, _) in zip(editor.chunks, raw.deltas, strict=True)
    ]
    raw_ms = [(got - at) * 1000 for at, got, _ in raw.deltas]
    return acp_ms, raw_ms


def spread(label: str, values: list[float]) -> str:
    p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
    median = statistics.median(values)
    return f"  {label}: median {median:6.2f} ms, p90 {p90:6.2f} ms, max {max(values):7.2f} ms"


async def start_once(env: dict[str, str], ws: Path) -> float:
    """Seconds from spawning `harness acp` to its `initialize` answer."""
    began = time.perf_counter()
    async with open_editor(env, ws, Editor()):
        return time.perf_counter() - began


def first_byte(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning `argv` to the first byte it prints (its exit not waited for)."""
    began = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.read(1)
    elapsed = time.perf_counter() - began
    process.communicate()
    return elapsed


def startup(env: dict[str, str], ws: Path, runs: int) -> dict[str, float]:
    """Medians, in ms, of `runs` interleaved starts of each kind after one warm-up."""
    kinds: dict[str, Callable[[], float]] = {
        "harness acp, spawn to initialize answer": lambda: asyncio.run(start_once(env, ws)),
        "python -c 'print(1)'": lambda: first_byte([sys.executable, "-c", "print(1)"], env),
        "python -c 'import acp; print(1)'": lambda: first_byte(
            [sys.executable, "-c", "import acp; print(1)"], env
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in kinds}
    for attempt in range(runs + 1):
        for name, run in kinds.items():
            seconds = run()
            if attempt:
                times[name].append(seconds)
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--pieces", type=int, default=150, help="text pieces per turn")
    parser.add_argument("--gap-ms", type=float, default=5.0, help="0: all pieces at once")
    parser.add_argument("--starts", type=int, default=5)
    return parser.parse_args()


def script(turns: int, pieces: int, gap: float) -> list[Any]:
    replies = [Reply(content=answer(turn, pieces)) for turn in range(turns)]
    return [PacedReply(reply=r, gap=gap) if gap else r for r in replies]


def main() -> None:
    parsed = parse()
    root = Path(tempfile.mkdtemp(prefix="cha-", dir="/tmp"))
    env = sandbox(root)
    server = FakeModelServer(script(parsed.turns, parsed.pieces, parsed.gap_ms / 1000)).start()
    profile = {"type": "openai", "endpoint": server.endpoint, "model": "m", "notes": False}
    config = {"default_provider": "fake", "providers": {"fake": profile}}
    (root / "home" / ".coding_harness.json").write_text(json.dumps(config))
    socket_path = Path(env["CODING_HARNESS_SOCKET"])
    daemon = start_daemon(socket_path, env)
    try:
        editor, raw = asyncio.run(stream_turns(env, root / "ws", parsed.turns))
        starts = startup(env, root / "ws", parsed.starts)
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        stop_daemon(socket_path)
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    acp_ms, raw_ms = paired(editor, raw)
    pace = f"{parsed.gap_ms:g} ms apart" if parsed.gap_ms else "all at once"
    print(f"{len(acp_ms)} text deltas over {parsed.turns} turns, pieces {pace}:")
    print(spread("ACP client, emit to agent_message_chunk", acp_ms))
    print(spread("raw client, emit to event             ", raw_ms))
    print("target: ACP median 5 ms or under")
    print(f"start-up, medians of {parsed.starts} runs (load {os.getloadavg()[0]:.1f}):")
    for name, ms in starts.items():
        print(f"  {name}: {ms:6.1f} ms")


if __name__ == "__main__":
    main()
