"""`harness web` in a real browser: Debian's chromium, headless, driven by playwright.

The page opens from the printed URL (the token leaves the address bar), a turn
streams in, Approve writes the file and withdraws the terminal's question, a
script in the model's Markdown runs nothing, a reload mid-turn loses nothing,
and an answer pressed offline is sent once the network is back and counted.
Skipped, saying why, where no chromium or no playwright can be had (.ci/run
installs chromium as it installs bubblewrap).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.conftest import BUGGY, FIXED
from tests.support import waiting
from tests.support.fake_model_server import Reply, tool_call
from tests.support.web_bridge import WebStack, web_stack

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EVIL = 'Fixed it. <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> **done**'

if CHROMIUM is None:
    pytest.skip("no chromium on this machine (apt-get install chromium)", allow_module_level=True)
try:
    from playwright.sync_api import Page, expect, sync_playwright
except ImportError:
    pytest.skip("playwright is not installed (pip install -e '.[dev]')", allow_module_level=True)


@pytest.fixture(scope="module")
def stack() -> Iterator[WebStack]:
    with web_stack() as built:
        yield built


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    profile = tempfile.mkdtemp(prefix="chw-chromium-")
    with sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            args=FLAGS,
            headless=True,
            viewport={"width": 390, "height": 844},
        )
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(stack: WebStack, browser: Any) -> Iterator[Page]:
    (stack.sandbox.workspace / "calc.py").write_text(BUGGY)
    opened: Page = browser.new_page()
    opened.goto(f"{stack.base}?token={stack.token}")
    opened.wait_for_url(stack.base)  # the token left the address bar
    yield opened
    opened.close()


def _script_edit(stack: WebStack, reply: str = EVIL) -> None:
    stack.model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content=reply),
    )


def _newest_session(stack: WebStack, page: Page, state: str) -> str:
    def found() -> list[str]:
        answer = page.request.get(f"{stack.base}api/sessions").json()
        return [s["session"] for s in answer["sessions"] if s["state"] == state]

    return waiting.wait_for(found, f"a session {state}")[0]


def test_approve_in_the_browser_writes_the_file_and_the_terminal_question_goes(
    stack: WebStack, page: Page
) -> None:
    _script_edit(stack)
    oneshot = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", "-p", "fix calc.py"],
        env=stack.sandbox.env,
        cwd=stack.sandbox.workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        session = _newest_session(stack, page, "waiting")
        expect(page.locator(f"li[data-session='{session}'] .state")).to_have_text(
            "waiting for you", timeout=10_000
        )  # the list is live
        page.click(f"li[data-session='{session}'] a")
        page.locator(".approval button.yes").click()
        expect(page.locator(".approval .outcome")).to_have_text("counted: yes")
        expect(page.locator(".line.done")).to_be_visible()
        _out, err = oneshot.communicate(timeout=60)
    finally:
        if oneshot.poll() is None:
            oneshot.kill()
            oneshot.communicate()
    assert oneshot.returncode == 0, err
    assert (stack.sandbox.workspace / "calc.py").read_text() == FIXED
    assert "approved in the browser (harness web, pid " in err
    reply = page.locator(".reply").last
    expect(reply.locator("strong")).to_have_text("done")
    assert "<img src=x onerror=" in reply.inner_text()  # shown as text
    assert page.evaluate("window.pwned") is None  # and nothing ran
    assert page.locator(".reply img, .reply script").count() == 0
    assert page.locator("pre.diff span.add").first.inner_text().startswith("+")


def test_a_reload_mid_turn_loses_nothing_and_an_offline_answer_counts_once_back(
    stack: WebStack, page: Page, browser: Any
) -> None:
    _script_edit(stack, reply="All **fixed** now.")
    session = _new_session(stack)
    page.goto(f"{stack.base}s/{session}")
    page.fill("#text", "fix calc.py")
    page.click("#task button[type=submit]")
    expect(page.locator(".approval button.yes")).to_be_visible()
    page.reload()  # mid-turn: the question waits
    expect(page.locator(".approval button.yes")).to_be_visible()
    assert page.locator(".you").count() == 1
    browser.set_offline(True)
    try:
        page.locator(".approval button.yes").click()
        expect(page.locator(".approval .outcome")).to_contain_text("offline")
    finally:
        browser.set_offline(False)
    expect(page.locator(".approval .outcome")).to_have_text("counted: yes", timeout=15_000)
    expect(page.locator(".line.done")).to_be_visible()
    assert page.locator(".reply").last.inner_text().strip() == "All fixed now."
    assert page.locator(".you").count() == 1 and page.locator(".line.done").count() == 1
    assert (stack.sandbox.workspace / "calc.py").read_text() == FIXED


def _new_session(stack: WebStack) -> str:
    from tests.support.processes import client

    with client(stack.sandbox.socket, "maker", approvals=False) as maker:
        made: str = maker.request("session.create", {"cwd": str(stack.sandbox.workspace)})[
            "session"
        ]
    return made
