"""What one editor's choices show in another: the model picker follows a change made
elsewhere, and a change to the same value is not announced (issue 31, item 10);
`usage_update` goes only to a client that can take it (item 11).

Real daemon, two real `harness acp` processes driven by the SDK's client side.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.waiting import until

pytestmark = pytest.mark.integration

TIMEOUT = 60


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


def _two_profiles(sandbox: Sandbox, model: FakeModelServer) -> None:
    profiles = {
        name: {"type": "openai", "endpoint": model.endpoint, "model": f"{name}-model"}
        for name in ("fake", "other")
    }
    config = {"default_provider": "fake", "providers": profiles}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def test_a_model_change_moves_the_other_editors_picker_once(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    _two_profiles(sandbox, model)
    one, two = Editor(), Editor()

    async def scenario() -> None:
        async with (
            open_editor(sandbox.env, calc_project, one) as a,
            open_editor(sandbox.env, calc_project, two) as b,
        ):
            session = (await a.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            await b.resume_session(session_id=session, cwd=str(calc_project), mcp_servers=[])
            await a.set_config_option(config_id="model", session_id=session, value="other")
            await until(lambda: two.of_kind("config_option_update"), "the picker update")
            await a.set_config_option(config_id="model", session_id=session, value="other")
            await b.set_config_option(config_id="model", session_id=session, value="fake")
            await until(lambda: one.of_kind("config_option_update"), "the update back")

    run(scenario())
    [moved] = two.of_kind("config_option_update")
    [picker] = moved.config_options
    assert (picker.id, picker.current_value) == ("model", "other")
    [back] = one.of_kind("config_option_update")
    assert back.config_options[0].current_value == "fake"
    # Each editor heard of the other's change once, and of its own (or a same-value
    # choice) not at all: one thought each.
    assert two.text("agent_thought_chunk").count("next turns use") == 1
    assert one.text("agent_thought_chunk").count("next turns use") == 1


def test_usage_update_goes_only_to_a_client_that_can_take_it(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(Reply(content="One."), Reply(content="Two."))
    old, new = Editor(), Editor()  # protocol 1 (an SDK from before usage_update), and 2

    async def scenario() -> None:
        for editor, version in ((old, 1), (new, 2)):
            async with open_editor(
                sandbox.env, calc_project, editor, protocol_version=version
            ) as conn:
                session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
                await conn.prompt(session_id=session, prompt=text_prompt("hello"))

    run(scenario())
    assert "agent_message_chunk" in old.kinds() and "usage_update" not in old.kinds()
    [usage] = new.of_kind("usage_update")
    assert usage.used == 120
