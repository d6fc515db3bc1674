"""Spending limits end to end: the real daemon and `harness`, the fake model server with
priced answers. A turn stops before the call that would pass a limit, says what was
spent and how to raise the limit, and goes on once the limit is raised.

These run once `agent.spend_limit_session_usd` and `agent.spend_limit_day_usd` are
settings (`AgentSettings`) and the turn asks its `TurnSpending` before each call.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import run_harness

# $1 per million tokens in and out: 100,000 + 20,000 tokens cost $0.12.
PRICING = {"input": 1.0, "output": 1.0}
PRICEY = {"prompt_tokens": 100_000, "completion_tokens": 20_000}


def configure(sandbox: Sandbox, endpoint: str, pricing: Any = PRICING, **agent: Any) -> None:
    profile = {"type": "openai", "endpoint": endpoint, "model": "fake-model"}
    if pricing is not None:
        profile["pricing"] = pricing
    config = {"default_provider": "fake", "providers": {"fake": profile}, "agent": agent}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def harness(
    sandbox: Sandbox, *args: str, json_out: bool = True
) -> subprocess.CompletedProcess[str]:
    options = ["--output-format", "json"] if json_out else []
    return run_harness([*options, *args], env=sandbox.env, cwd=sandbox.workspace)


def test_a_turn_stops_before_the_call_that_would_pass_the_session_limit(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint, spend_limit_session_usd=0.2)
    model.add(Reply(tool_calls=[tool_call("list_dir", path=".")], **PRICEY))
    model.add(Reply(content="Listed.", **PRICEY))
    result = harness(sandbox, "-p", "what is here?")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert len(model.requests) == 1  # the second call (~$0.14 more) was not made
    assert "this session has spent $0.12" in report["reply"]
    assert "$0.20 spending limit" in report["reply"]
    assert "agent.spend_limit_session_usd" in report["reply"]
    assert report["cost_usd"] == pytest.approx(0.12)

    configure(sandbox, model.endpoint, spend_limit_session_usd=5)  # raised: the turn goes on
    again = harness(sandbox, "--session", report["session"], "-p", "go on")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["reply"] == "Listed."


def test_the_daily_limit_counts_every_session(sandbox: Sandbox, model: FakeModelServer) -> None:
    configure(sandbox, model.endpoint, spend_limit_day_usd=0.1)
    model.add(Reply(content="First.", **PRICEY), Reply(content="never"))
    first = harness(sandbox, "-p", "one")
    assert first.returncode == 0, first.stderr  # $0.12: the first call was estimated lower
    second = harness(sandbox, "-p", "two")  # a new session
    assert second.returncode == 1, second.stderr
    reply = json.loads(second.stdout)["reply"]
    assert "model calls today" in reply and "$0.12, reaching the $0.10" in reply
    assert "agent.spend_limit_day_usd" in reply
    assert len(model.requests) == 1


def test_a_profile_without_pricing_is_said_not_to_count(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint, pricing=None, spend_limit_session_usd=0.01)
    model.add(Reply(content="Free as far as we know.", **PRICEY))
    result = harness(sandbox, "-p", "hi", json_out=False)
    assert result.returncode == 0, result.stderr
    assert "has no pricing" in result.stderr
    assert "Free as far as we know." in result.stdout
