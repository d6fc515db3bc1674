"""The REPL's first-run offer (issue 11, item 8), in a real terminal (tmux): with no
config file and a model server found on a probed port, the REPL asks once to save
the profile as ~/.coding_harness.json; yes writes it (0600), anything else writes
nothing, and an existing file is never touched. Skipped where tmux is not installed.
"""

from __future__ import annotations

import json
import shutil
import signal
import stat
from collections.abc import Iterator

import pytest

from coding_harness.daemon.providers.discovery import KEY_VARIABLES
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import Reply
from tests.support.model_listing import PROBE_PORTS, ListingModelServer, probe_ports, without_keys
from tests.support.processes import start_daemon
from tests.support.tmux_terminal import Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

QUESTION = "save this as ~/.coding_harness.json? [y/N]"


@pytest.fixture
def found_repl(sandbox: Sandbox) -> Iterator[tuple[Terminal, ListingModelServer]]:
    """A daemon with no config that finds a listing server as `ollama`, and the REPL."""
    sandbox.env = without_keys(sandbox.env, KEY_VARIABLES)
    server = ListingModelServer(["tiny-coder"]).start()
    env = {**sandbox.env, PROBE_PORTS: probe_ports(ollama=server.port)}
    process = start_daemon(sandbox.socket, env)
    term = Terminal(sandbox, sandbox.workspace, "first-run")
    try:
        term.wait_for(QUESTION)
        yield term, server
    finally:
        term.close()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
        server.stop()


def test_yes_saves_the_discovered_profile(
    sandbox: Sandbox, found_repl: tuple[Terminal, ListingModelServer]
) -> None:
    term, server = found_repl
    config = sandbox.home / ".coding_harness.json"
    assert "using ollama · tiny-coder" in term.text()
    term.type("y")
    term.wait_for(f"saved: {config}")
    assert json.loads(config.read_text()) == {
        "default_provider": "ollama",
        "providers": {
            "ollama": {
                "type": "openai",
                "endpoint": f"http://localhost:{server.port}/v1/chat/completions",
                "model": "tiny-coder",
            }
        },
    }
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    server.add(Reply(content="Hello after saving."))
    term.type("say hi")  # the prompt works after the question, on the saved profile
    term.wait_for("Hello after saving.")
    assert server.requests[-1]["model"] == "tiny-coder"


def test_no_writes_nothing(
    sandbox: Sandbox, found_repl: tuple[Terminal, ListingModelServer]
) -> None:
    term, server = found_repl
    term.type("n")
    term.wait_for("not saved")
    server.add(Reply(content="Hello unsaved."))
    term.type("say hi")
    term.wait_for("Hello unsaved.")
    assert not (sandbox.home / ".coding_harness.json").exists()
    assert QUESTION not in term.text().split(QUESTION, 1)[1]  # asked once only
