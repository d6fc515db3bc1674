"""The code index seen from the clients, against a real daemon and the fake model
server: `/map` in the REPL, `/context`'s repo map row, `harness daemon status` (and
`--json`), and what a one-shot run prints of a build (its first and last line; under
-q nothing)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.integration.conftest import Sandbox
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.generated_repo import generate_repo
from tests.support.processes import client, run_harness
from tests.support.repl_run import ReplRun, user_messages

NEXT_TASK, NEXT_ANSWER = "say hi", "Hello after the map."
SHAPES = (
    "class Square:\n"
    "    def __init__(self, side):\n"
    "        self.side = side\n\n"
    "def area_of_square(shape):\n"
    "    return shape.side * shape.side\n"
)
BIG = 600  # files: a build this big is announced at once (client/render/printer.py)


def indexes(sandbox: Sandbox) -> list[dict[str, Any]]:
    with client(sandbox.socket, approvals=False) as conn:
        found: list[dict[str, Any]] = conn.request("daemon.status").get("indexes") or []
        return found


def ready_index(sandbox: Sandbox, root: Path) -> dict[str, Any]:
    """The daemon's entry for `root` once its build has ended."""

    def ready() -> dict[str, Any] | None:
        mine = [i for i in indexes(sandbox) if i["root"] == str(root)]
        return mine[0] if mine and mine[0]["state"] == "ready" else None

    return waiting.wait_for(ready, f"the code index of {root} to be ready", every=0.1)


def map_until_ready(run: ReplRun) -> str:
    """Type /map until its header gives the map's size; what it printed then."""

    def shown() -> bool:
        if "repo map: " in run.err.text():
            return True
        run.type("/map\n")
        return False

    waiting.wait_for(shown, "/map to show the map", every=0.5)
    return run.err.text()


def test_map_shows_the_ranked_map_and_context_counts_it(
    repl: Callable[..., ReplRun], model: FakeModelServer, calc_project: Path
) -> None:
    (calc_project / "shapes.py").write_text(SHAPES)
    model.add(Reply(content=NEXT_ANSWER))
    run = repl()
    err = map_until_ready(run)
    header = re.search(r"repo map: ([\d,]+) of 1,024 tokens, (\d+) files indexed", err)
    assert header is not None, err
    assert int(header.group(2)) == 2  # calc.py and shapes.py; the Makefile has no grammar
    run.wait_for("shapes.py")
    run.wait_for("class Square")
    assert "\x1b" not in run.out.text()
    run.type("/context\n")
    run.wait_for("repo map")
    row = next(line for line in run.out.text().splitlines() if "repo map" in line)
    assert header.group(1) in row  # the tokens /map gave are those /context counts
    run.type(NEXT_TASK + "\n")
    run.wait_for(NEXT_ANSWER)
    assert run.finish() == 0
    assert user_messages(model) == [NEXT_TASK]


def test_map_off_says_how_to_turn_it_on(
    sandbox: Sandbox, repl: Callable[..., ReplRun], model: FakeModelServer
) -> None:
    config_path = sandbox.home / ".coding_harness.json"
    config = json.loads(config_path.read_text())
    config["agent"]["repo_map_tokens"] = 0
    config_path.write_text(json.dumps(config))
    run = repl()
    run.type("/map\n")
    run.wait_for("agent.repo_map_tokens is 0", where="err")
    run.type("/context\n")
    run.wait_for("context:")
    assert "repo map" not in run.out.text()
    assert run.finish() == 0


def test_daemon_status_has_a_line_per_index_and_json_passes_them_through(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path, daemon: object
) -> None:
    model.add(Reply(content="hello back"))
    assert run_harness(["-p", "say hello"], env=sandbox.env, cwd=calc_project).returncode == 0
    entry = ready_index(sandbox, calc_project)
    shown = run_harness(["daemon", "status"], env=sandbox.env, cwd=calc_project)
    assert shown.returncode == 0, shown.stderr
    rows = [line for line in shown.stdout.splitlines() if line.startswith("index ")]
    assert rows == [f"index     {calc_project}  ready, 1 file, {entry['seconds']:.1f} s"]
    as_json = run_harness(["daemon", "status", "--json"], env=sandbox.env, cwd=calc_project)
    assert as_json.returncode == 0, as_json.stderr
    answer = json.loads(as_json.stdout)  # standard output is the JSON alone
    assert answer["indexes"] == [entry] and answer["pid"] > 0


def test_a_big_build_shows_its_first_line_once_and_quiet_shows_none(
    sandbox: Sandbox, model: FakeModelServer, daemon: object
) -> None:
    quiet_root, loud_root = sandbox.root / "quiet", sandbox.root / "loud"
    for root in (quiet_root, loud_root):
        generate_repo(root, BIG, body_lines=2)
    # The model answers after the build has begun, so the run hears of it.
    model.add(Reply(content="done quietly", delay=1.5), Reply(content="done", delay=1.5))
    quiet = run_harness(["-q", "-p", "look"], env=sandbox.env, cwd=quiet_root)
    assert quiet.returncode == 0, quiet.stderr
    assert (quiet.stdout, quiet.stderr) == ("done quietly\n", "")
    loud = run_harness(["-p", "look"], env=sandbox.env, cwd=loud_root)
    assert loud.returncode == 0, loud.stderr
    assert loud.stdout == "done\n"
    starts = re.findall(r"^indexing: [\d,]+/[\d,]+ files$", loud.stderr, re.MULTILINE)
    assert len(starts) == 1, loud.stderr
    ends = re.findall(r"^code index ready: [\d,]+ files in [\d.]+ s$", loud.stderr, re.MULTILINE)
    assert len(ends) <= 1 and loud.stderr.count("indexing") == 1, loud.stderr
