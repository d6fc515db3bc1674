"""The habits Claude Code and aider users bring, in the REPL against a real daemon
(issue 26, items 11, 13 and 14): `/clear`, `/cost`, `/init`, `/resume`, `!cmd`,
`@path`, Shift-Tab, Esc, bare `/model` and `/search`, and one line per outcome."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.model_listing import ListingModelServer
from tests.support.oneshot import harness
from tests.support.repl_run import ReplRun, user_messages, wait_until

SHIFT_TAB, ESC = "\x1b[Z", "\x1b"


def test_clear_compact_and_help_say_one_true_line_each(
    model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="The word is kumquat."))
    run = repl()
    run.type("remember kumquat\n")
    run.wait_for("The word is kumquat.")
    run.type("/compact\n")
    run.wait_for("nothing to compact yet (2 messages)", "err")
    run.type("/history\n")
    run.wait_for("> remember kumquat", "err")  # one exchange stays as it was: no brief
    run.type("/clear\n")
    run.wait_for("conversation cleared", "err")
    run.type("/help\n")
    run.wait_for("Anything else is a task")
    assert run.finish() == 0
    err = run.err.text()
    assert err.count("conversation cleared") == 1 and "history replaced" not in err
    assert "compacted" not in err and "unknown command /clear" not in err
    rows = [line for line in run.out.text().splitlines() if line.startswith(("/", "!", "@"))]
    columns = {len(re.match(r"\S+\s+", row).group(0)) for row in rows}  # type: ignore[union-attr]
    assert len(rows) > 20 and len(columns) == 1, rows  # every summary starts in one column
    assert any(row.startswith(("/clear", "/reset")) for row in rows)


def test_bang_runs_the_users_own_command_and_the_model_sees_its_output(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    (sandbox.workspace / ".env").write_text("TOKEN_NAME=kumquat\n")  # hidden: the agent may not
    model.add(Reply(content="It printed kumquat."))
    run = repl()
    run.type("!cat .env; echo sum=$((6*7)); exit 3\n")
    run.wait_for("exit code 3; the output is in the conversation", "err")
    run.type("what did it print?\n")
    run.wait_for("It printed kumquat.")
    assert run.finish() == 0
    assert "TOKEN_NAME=kumquat" in run.out.text() and "sum=42" in run.out.text()
    said, asked = user_messages(model)
    assert said.startswith("I ran `cat .env;") and "sum=42" in said and "exit code 3" in said
    assert asked == "what did it print?"
    roles = [m["role"] for m in model.requests[-1]["messages"]]
    assert roles[-3:] == ["user", "assistant", "user"]  # the roles keep alternating


def test_at_path_attaches_the_file_to_the_task(
    model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="It subtracts."))
    run = repl()
    run.type("what is wrong in @calc.py? mail me@example.com\n")
    run.wait_for("It subtracts.")
    assert run.finish() == 0
    assert "attached calc.py (2 lines)" in run.err.text()
    (task,) = user_messages(model)
    assert task.startswith("what is wrong in @calc.py? mail me@example.com\n\n")
    assert '<file path="calc.py">\ndef add(a, b):\n    return a - b\n</file>' in task


def test_init_proposes_agents_md_as_an_edit_to_approve(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    guide = "# AGENTS.md\n\nRun `make check` after each change.\n"
    model.add(
        Reply(tool_calls=[tool_call("write_file", path="AGENTS.md", content=guide)]),
        Reply(content="Wrote AGENTS.md."),
    )
    run = repl()
    run.type("/init\n")
    run.wait_for("Apply this change?", "screen")
    assert not (sandbox.workspace / "AGENTS.md").exists()  # nothing written before the yes
    run.type("y\n")
    run.wait_for("Wrote AGENTS.md.")
    assert run.finish() == 0
    assert (sandbox.workspace / "AGENTS.md").read_text() == guide
    task = user_messages(model)[0]
    assert task.startswith("Write AGENTS.md at the root of this project")
    assert "(Makefile)" in task and "Create it with write_file" in task


def test_cost_after_each_reply_when_the_profile_has_pricing_and_slash_cost(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    sandbox.write_config(model.endpoint, pricing={"input": 1.0, "output": 2.0})
    model.add(Reply(content="Hello.", prompt_tokens=1000, completion_tokens=500))
    run = repl()
    run.type("hi\n")
    run.wait_for("Hello.")
    run.wait_for("cost: 1,000 tokens in, 500 out · $0.0020 this turn", "err")
    run.type("/cost\n")
    run.wait_for("this session: 1,000 tokens in, 500 out · $0.0020", "err")
    assert run.finish() == 0


def test_bare_model_lists_what_the_server_offers_and_a_number_picks_one(
    sandbox: Sandbox, repl: Callable[..., ReplRun]
) -> None:
    with ListingModelServer(["fake-model", "qwen2.5-coder:7b"]) as server:
        sandbox.write_config(server.endpoint)
        run = repl()
        run.type("/model\n")
        run.wait_for("2. qwen2.5-coder:7b")
        run.type("/model 2\n")
        run.wait_for("next turns use fake · qwen2.5-coder:7b", "err")
        assert run.finish() == 0
    assert "model: fake-model (provider fake)" in run.err.text()
    assert "* 1. fake-model" in run.out.text()  # the one in use is marked
    assert run.err.text().count("next turns use") == 1  # the notice, not an echo of it too


def test_bare_search_shows_its_state_and_switches_nothing(
    model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    run = repl()
    run.type("/search\n/search\n")
    wait_until(lambda: run.err.text().count("web search: off, from the config") == 2, "state")
    run.type("/search duckduckgo\n")
    run.wait_for("web search on", "err")
    run.type("/search\n")
    run.wait_for("web search: on (duckduckgo), this session's choice", "err")
    assert run.finish() == 0


def test_shift_tab_cycles_the_mode_and_esc_cancels_the_turn(
    model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="too late", delay=5.0), Reply(content="Hello again."))
    run = repl()
    run.type(SHIFT_TAB)
    run.wait_for("mode: accept-edits", "err")
    run.type(SHIFT_TAB)
    run.wait_for("mode: read-only", "err")
    run.type(SHIFT_TAB)
    wait_until(lambda: run.err.text().count("mode: ask") == 1, "back to ask", run=run)
    run.type("take your time\n")
    wait_until(lambda: len(model.requests) >= 1, "the model asked", run=run)
    run.wait_for("intent:", "err")
    run.type(ESC)
    run.wait_for("(turn cancelled)", "err")
    run.type("say hi\n")
    run.wait_for("Hello again.")
    assert run.finish() == 0
    assert "too late" not in run.out.text()


def test_resume_lists_the_sessions_with_titles_and_opens_one(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="Noted: kumquat."), Reply(content="It was kumquat."))
    done = harness(sandbox, "--output-format", "json", "-p", "remember kumquat")
    first = json.loads(done.stdout)["session"]
    run = repl()
    run.type("/resume\n")
    run.wait_for("remember kumquat")
    listing = run.out.text()
    assert first.rsplit("-", 1)[-1] in listing and "(no task yet)" in listing
    assert re.search(r"\*\s+\d\. ", listing)  # this session is marked
    run.type(f"/resume {first.rsplit('-', 1)[-1]}\n")
    run.wait_for("> remember kumquat", "err")  # the other session's history, as attach shows it
    run.type("what was it?\n")
    run.wait_for("It was kumquat.")
    assert run.finish() == 0
    assert user_messages(model) == ["remember kumquat", "what was it?"]


def test_attach_by_short_id_opens_the_session(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun], calc_project: Path
) -> None:
    model.add(Reply(content="Noted."), Reply(content="Again."))
    done = harness(sandbox, "--output-format", "json", "-p", "remember kumquat")
    session = json.loads(done.stdout)["session"]
    run = repl(session=session.rsplit("-", 1)[-1])  # as `harness attach 68e7d5` does
    run.wait_for("> remember kumquat", "err")
    run.type("and again\n")
    run.wait_for("Again.")
    assert run.finish() == 0
    assert user_messages(model) == ["remember kumquat", "and again"]
