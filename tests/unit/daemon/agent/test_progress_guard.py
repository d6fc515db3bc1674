"""ProgressGuard takes its first fingerprint beside the first model call, and the
tools wait for it: it must show the workspace as they found it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from coding_harness.daemon.agent.progress import ProgressGuard


def test_start_does_not_wait_for_the_probe_and_tools_wait_for_the_first_fingerprint() -> None:
    release = threading.Event()
    state = {"files": "before"}
    taken: list[str] = []

    def probe() -> str:
        release.wait(5)
        taken.append(state["files"])
        return state["files"]

    async def main() -> None:
        guard = ProgressGuard(probe, limit=2)
        guard.start()  # returns while the probe is blocked: the model call goes on
        await asyncio.sleep(0.05)
        assert taken == []
        waiting = asyncio.create_task(guard.before_tools())
        await asyncio.sleep(0.05)
        assert not waiting.done()  # the tools do not run before the first fingerprint
        release.set()
        await waiting
        assert taken == ["before"]
        state["files"] = "after"  # a tool wrote a file
        assert await guard.observe() is True
        assert await guard.observe() is False
        assert await guard.observe() is False
        assert guard.stalled

    asyncio.run(main())


def test_a_first_fingerprint_that_failed_is_raised_to_the_tools() -> None:
    def probe() -> str:
        raise OSError("the workspace went away")

    async def main() -> None:
        guard = ProgressGuard(probe)
        guard.start()
        with pytest.raises(OSError, match="went away"):
            await guard.before_tools()

    asyncio.run(main())


def test_without_a_probe_nothing_is_taken() -> None:
    async def main() -> None:
        guard = ProgressGuard(None)
        guard.start()
        await guard.before_tools()
        assert await guard.observe() is False
        assert not guard.stalled

    asyncio.run(main())
