"""The REPL on a thread of the test, typed into through prompt_toolkit's pipe input.

`ReplRun` runs `run_repl` exactly as at a terminal: its prompt stays open while
turns stream, so a test types a line, waits for what it should print, then
types the next. Its screen is a VT100 output recorded in a string; its standard
output and error are recording streams. The `repl` fixture that starts them is
in tests/integration/conftest.py.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from coding_harness.client.args import OneShotOptions
from coding_harness.client.repl.repl import run_repl
from tests.support.fake_model_server import FakeModelServer

WAIT = 15.0


class Recorder(io.StringIO):
    """A text stream two threads may write and read."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            return super().write(text)

    def text(self) -> str:
        with self._lock:
            return self.getvalue()


class ReplRun:
    """A REPL on a thread: `type` into it, `wait_for` what it prints, `finish` it."""

    def __init__(self, options: OneShotOptions) -> None:
        self.out, self.err, self.screen = Recorder(), Recorder(), Recorder()
        self._pipe_cm = create_pipe_input()
        self.pipe = self._pipe_cm.__enter__()
        output = Vt100_Output(self.screen, lambda: Size(rows=30, columns=120), enable_cpr=False)
        self.code: int | None = None
        self._thread = threading.Thread(
            target=self._run, args=(options, output), name="repl", daemon=True
        )
        self._thread.start()

    def _run(self, options: OneShotOptions, output: Vt100_Output) -> None:
        self.code = run_repl(
            options, pt_input=self.pipe, pt_output=output, out=self.out, err=self.err
        )

    def type(self, text: str) -> None:
        self.pipe.send_text(text)

    def wait_for(self, text: str, where: str = "out", timeout: float = WAIT) -> None:
        stream = {"out": self.out, "err": self.err, "screen": self.screen}[where]
        wait_until(lambda: text in stream.text(), f"{text!r} on {where}", timeout, self)

    def finish(self, text: str = "/quit\n") -> int:
        if text:
            self.type(text)
        self._thread.join(WAIT)
        self._pipe_cm.__exit__(None, None, None)
        assert not self._thread.is_alive(), "the REPL did not leave"
        assert self.code is not None
        return self.code


def wait_until(
    check: Callable[[], bool], what: str, timeout: float = WAIT, run: ReplRun | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            shown = f"\nout: {run.out.text()!r}\nerr: {run.err.text()!r}" if run else ""
            raise AssertionError(f"timed out waiting for {what}{shown}")
        time.sleep(0.02)


def user_messages(model: FakeModelServer) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"]
