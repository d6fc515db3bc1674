"""The REPL's `/debug on|off` and bare `/debug` (issue 11, item 7): from `/debug on`
the session's model calls go to its debug log, whose path is printed; `/debug`
shows the state; after `/debug off` nothing more is written."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.repl_run import ReplRun, wait_until
from tests.support.sse_text import streamed_text

PATH_LINE = re.compile(r"debug: raw model exchanges go to (\S+\.jsonl)")


def _said(run: ReplRun, text: str, times: int) -> None:
    wait_until(lambda: run.err.text().count(text) >= times, f"{text!r} x{times}", run=run)


def test_debug_on_records_the_next_task_and_off_stops(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="first kumquat"), Reply(content="second fig"))
    run = repl()
    run.type("/debug\n")
    _said(run, "debug: off", 1)
    run.type("/debug on\n")
    _said(run, "debug: raw model exchanges go to", 1)
    run.type("say kumquat\n")
    run.wait_for("first kumquat")
    run.type("/debug\n")
    _said(run, "debug: raw model exchanges go to", 2)
    run.type("/debug off\n")
    _said(run, "debug: off", 2)
    run.type("/debug sideways\n")
    _said(run, "say on or off", 1)
    run.type("again\n")
    run.wait_for("second fig")
    assert run.finish() == 0

    shown = PATH_LINE.findall(run.err.text())
    assert len(set(shown)) == 1
    path = Path(shown[0])
    assert path.parent == sandbox.root / "state" / "coding-harness" / "debug"
    # The turn's own lines: its turn-close notes call, marked `notes`, may land there too.
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines = [line for line in lines if not line.get("notes")]
    assert [line["kind"] for line in lines] == ["request", "response"]
    assert lines[0]["body"]["messages"][-1]["content"] == "say kumquat"
    assert streamed_text(lines[1]["body"]) == "first kumquat"
    assert "second fig" not in path.read_text()
