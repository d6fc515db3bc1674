"""Real MCP servers through the daemon: a scripted model calls their tools via `harness -p`.

The servers are ones nobody here wrote, from PyPI (`mcp-server-time`,
`mcp-server-fetch` against a loopback page, `mcp-server-git` on a temporary
repository), over stdio, and a Streamable HTTP server built with the SDK
(tests/support/mcp_http_server.py) behind a bearer token and a header. Each
test checks that the server's answer reaches the model in the tool message of
its next request; these servers are set `"approve": "never"` (approvals have
their own tests, test_mcp_approvals.py).
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_http_server import PIXEL, McpHttpServer
from tests.support.mcp_setup import (
    FETCH,
    GIT,
    TIME,
    daemon_with_servers,
    http_server,
    offered_tools,
    stdio_server,
    tool_results,
    use_servers,
)
from tests.support.oneshot import harness
from tests.support.processes import run_harness
from tests.support.web_pages import local_site, send

TOKEN = "mcp-test-token-5f2a"
PIXEL_TEXT = base64.b64encode(PIXEL).decode()
PAGE = "<html><body><h1>Loopback</h1><p>The kettle is on the third shelf.</p></body></html>"


@pytest.fixture
def harnessd(sandbox: Sandbox, model: FakeModelServer) -> Iterator[subprocess.Popen[bytes]]:
    with daemon_with_servers(sandbox) as process:
        yield process


@pytest.fixture(scope="module")
def web() -> Iterator[McpHttpServer]:
    """The SDK's HTTP server: it answers only `Authorization: Bearer TOKEN` and `X-Team: blue`."""
    with McpHttpServer(token=TOKEN, headers={"X-Team": "blue"}) as server:
        yield server


def web_entry(web: McpHttpServer, **extra: object) -> dict[str, object]:
    return http_server(
        web.url, bearer_token_env="MCP_TEST_TOKEN", headers={"X-Team": "blue"}, **extra
    )


def test_time_server_answer_reaches_the_model(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    use_servers(sandbox, {"time": stdio_server(TIME, approve="never")})
    model.add(
        Reply(tool_calls=[tool_call("mcp__time__get_current_time", timezone="UTC")]),
        Reply(content="It is some time in UTC."),
    )
    result = harness(sandbox, "-p", "what time is it in UTC?")
    assert result.returncode == 0, result.stderr
    assert "It is some time in UTC." in result.stdout
    offered = model.requests[0]["tools"]
    [schema] = [
        t["function"] for t in offered if t["function"]["name"].startswith("mcp__time__get")
    ]
    assert "timezone" in schema["parameters"]["properties"]
    assert "mcp__time__convert_time" in offered_tools(model)
    [framed] = tool_results(model)
    head, *body, end = framed.splitlines()  # the server's answer, framed as its data
    assert head.startswith("[result of the MCP tool 'mcp__time__get_current_time'")
    assert end == "[end of MCP tool result]"
    answer = json.loads("\n".join(body))
    assert answer["timezone"] == "UTC" and "datetime" in answer


def test_fetch_server_reads_a_loopback_page(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    args = ("--ignore-robots-txt", "--allow-private-ips")
    use_servers(sandbox, {"fetch": stdio_server(FETCH, *args, approve="never")})
    with local_site({"/shelf": lambda h: send(h, 200, PAGE.encode(), "text/html")}) as base:
        model.add(
            Reply(tool_calls=[tool_call("mcp__fetch__fetch", url=f"{base}/shelf", raw=True)]),
            Reply(content="Third shelf."),
        )
        result = harness(sandbox, "-p", "read the shelf page with the fetch tool")
    assert result.returncode == 0, result.stderr
    [answer] = tool_results(model)
    assert "The kettle is on the third shelf." in answer


def test_git_server_reports_a_repository_status(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes]
) -> None:
    repo = git_repository(sandbox.root / "repo", sandbox.env)
    use_servers(sandbox, {"git": stdio_server(GIT, "--repository", str(repo), approve="never")})
    model.add(
        Reply(tool_calls=[tool_call("mcp__git__git_status", repo_path=str(repo))]),
        Reply(content="One file is not tracked."),
    )
    result = harness(sandbox, "-p", "what is the state of the repository?")
    assert result.returncode == 0, result.stderr
    assert "mcp__git__git_log" in offered_tools(model)
    [answer] = tool_results(model)
    assert "On branch main" in answer and "notes-untracked.txt" in answer


def test_http_server_with_bearer_token_from_the_client_and_headers(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes], web: McpHttpServer
) -> None:
    use_servers(sandbox, {"web": web_entry(web, approve="never")})
    model.add(
        Reply(
            tool_calls=[
                tool_call("mcp__web__echo", text="over HTTP"),
                tool_call("mcp__web__add", a=2, b=40),
            ]
        ),
        Reply(content="42."),
    )
    # The token is in the environment of the command only, not of the daemon.
    env = {**sandbox.env, "MCP_TEST_TOKEN": TOKEN}
    result = run_harness(["-p", "add them"], env=env, cwd=sandbox.workspace)
    assert result.returncode == 0, result.stderr
    echo, added = tool_results(model)
    assert echo.splitlines()[1:-1] == ["over HTTP"]  # in its frame
    assert '"sum"' in added and "42" in added


def test_error_results_timeouts_and_images_reach_the_model(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes], web: McpHttpServer
) -> None:
    use_servers(sandbox, {"web": web_entry(web, approve="never", call_timeout=1)})
    model.add(
        Reply(
            tool_calls=[
                tool_call("mcp__web__fail"),
                tool_call("mcp__web__slow", seconds=30),
                tool_call("mcp__web__image"),
            ]
        ),
        Reply(tool_calls=[tool_call("mcp__web__echo", text="still here")]),
        Reply(content="Handled the failure and the timeout."),
    )
    env = {**sandbox.env, "MCP_TEST_TOKEN": TOKEN}
    result = run_harness(["-p", "try them"], env=env, cwd=sandbox.workspace)
    assert result.returncode == 0, result.stderr
    assert "Handled the failure and the timeout." in result.stdout
    failed, hung, image = tool_results(model, request=1)
    assert "refuses this on purpose" in failed and "error" in failed.lower()
    assert "timed out" in hung.lower() or "timeout" in hung.lower()
    assert "image" in image.lower() and PIXEL_TEXT not in image
    # A timed-out call leaves the server usable: the next call is answered.
    assert tool_results(model)[-1].splitlines()[1:-1] == ["still here"]  # in its frame


def git_repository(path: Path, env: dict[str, str]) -> Path:
    """A repository on branch main with one commit and one untracked file."""
    path.mkdir()
    identity = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid"]
    (path / "README").write_text("a repository\n")
    for command in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "README"],
        ["git", *identity, "commit", "-q", "-m", "first"],
    ):
        subprocess.run(command, cwd=path, env=env, check=True, capture_output=True)
    (path / "notes-untracked.txt").write_text("not yet added\n")
    return path
