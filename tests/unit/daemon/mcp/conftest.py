"""The MCP tests' fixture: the hub's links are `FakeLink`s."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.mcp import link as link_module
from tests.unit.daemon.mcp.fake_link import FakeLink


@pytest.fixture
def fake_links(monkeypatch: pytest.MonkeyPatch) -> list[FakeLink]:
    """The hub's links are `FakeLink`s; returns the list of those made."""
    monkeypatch.setattr(link_module, "ServerLink", FakeLink)
    monkeypatch.setattr(FakeLink, "made", [])
    monkeypatch.setattr(FakeLink, "failing", set())
    monkeypatch.setattr(FakeLink, "tools_of", {})
    monkeypatch.setattr(FakeLink, "hanging", set())
    monkeypatch.setattr(FakeLink, "ailing_names", set())
    monkeypatch.setattr(FakeLink, "hung", asyncio.Event())
    return FakeLink.made
