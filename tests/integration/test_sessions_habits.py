"""Going back to a session and keeping the list tidy, with the real `harness` command
against a real daemon (issue 26, items 11 and 12): `harness -c`, `--resume`,
short ids and prefixes, titles, `harness sessions rm` and `prune`, and `harness
doctor` saying only what is true."""

from __future__ import annotations

import json
import subprocess

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.oneshot import harness
from tests.support.processes import start_daemon, stop_daemon
from tests.support.repl_run import user_messages


def one_shot(sandbox: Sandbox, *args: str) -> str:
    """Run a task; its session's full id."""
    done = harness(sandbox, "--output-format", "json", *args)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["session"])


def short(session: str) -> str:
    return session.rsplit("-", 1)[-1]


def test_continue_resumes_this_folders_latest_session(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    model.add(Reply(content="Noted."), Reply(content="Other."), Reply(content="kumquat"))
    first = one_shot(sandbox, "-p", "remember kumquat")
    other = sandbox.root / "other"
    other.mkdir()
    one_shot(sandbox, "--cwd", str(other), "-p", "elsewhere")  # newer, but another folder
    again = harness(sandbox, "-c", "--output-format", "json", "-p", "what was it?")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["session"] == first
    assert user_messages(model) == ["remember kumquat", "what was it?"]
    empty = sandbox.root / "empty"
    empty.mkdir()
    none = harness(sandbox, "-c", "--cwd", str(empty), "-p", "hello")
    assert none.returncode == 5
    assert f"no session in {empty} to continue" in none.stderr


def test_resume_lists_titles_and_takes_a_short_id_or_prefix(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    model.add(Reply(content="Noted."), Reply(content="Noted too."), Reply(content="kumquat"))
    first = one_shot(sandbox, "-p", "remember kumquat\nand more lines")
    one_shot(sandbox, "-p", "fix the bug in calc.py")
    listing = harness(sandbox, "--resume")  # off a terminal: the list, and how to pick
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert "fix the bug in calc.py" in lines[0] and "remember kumquat and more lines" in lines[1]
    assert short(first) in lines[1] and "idle" in lines[1]
    assert "harness --resume ID" in listing.stderr
    again = harness(sandbox, "--resume", short(first)[:4], "--output-format", "json", "-p", "it?")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["session"] == first
    assert user_messages(model)[0] == "remember kumquat\nand more lines"
    undo = harness(sandbox, "undo", "--list", "--session", short(first))
    assert undo.returncode == 0, undo.stderr  # every command that takes an id takes a short one
    assert "no checkpoints in session" in undo.stdout


def test_sessions_show_titles_and_rm_and_prune_remove_them_for_good(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    model.add(Reply(content="One."), Reply(content="Two."), Reply(content="Three."))
    first = one_shot(sandbox, "-p", "first task")
    second = one_shot(sandbox, "-p", "second task")
    third = one_shot(sandbox, "-p", "third task")
    table = harness(sandbox, "sessions")
    assert "TITLE" in table.stdout.splitlines()[0]
    assert any(line.endswith("  first task") for line in table.stdout.splitlines())
    removed = harness(sandbox, "sessions", "rm", short(first), second)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.splitlines() == [f"removed {first}", f"removed {second}"]
    unknown = harness(sandbox, "sessions", "rm", "nosuchid")
    assert unknown.returncode == 5 and "no session 'nosuchid'" in unknown.stderr
    listed = harness(sandbox, "sessions").stdout
    assert first not in listed and second not in listed and third in listed
    pruned = harness(sandbox, "sessions", "prune", "--older", "0d")
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout.startswith("removed 1 idle session unused for more than 0d")
    stop_daemon(sandbox.socket)
    restarted = start_daemon(sandbox.socket, sandbox.env)
    try:  # gone from the store too: a restart does not bring them back
        assert harness(sandbox, "sessions").stdout.strip() == "no sessions"
    finally:
        restarted.terminate()
        restarted.wait(timeout=10)
    bad = harness(sandbox, "sessions", "prune", "--older", "soon")
    assert bad.returncode == 5 and "usage: harness sessions prune --older DAYS" in bad.stderr


def test_doctor_does_not_say_no_server_answers_when_the_configured_one_does(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    done = harness(sandbox, "doctor")
    assert "no model server of yours answers" not in done.stdout
    assert "ok       provider fake: http://127.0.0.1:" in done.stdout  # the configured one
    assert done.stdout.rstrip().endswith("all is well") and done.returncode == 0
