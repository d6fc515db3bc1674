"""A daemon whose global file names a hub joins it as a runner; one without is untouched."""

from __future__ import annotations

import time

import pytest

from coding_harness.protocol import errors
from tests.support.fake_model_server import FakeModelServer
from tests.support.hub_machines import Machines
from tests.support.postgres import PostgresServer
from tests.support.processes import run_harness


def _hub_status(machine: object) -> dict[str, object]:
    conn = machine.client()  # type: ignore[attr-defined]
    try:
        status: dict[str, object] = conn.request("daemon.status", {})
    finally:
        conn.close()
    hub = status["hub"]
    assert isinstance(hub, dict)
    return hub


def test_a_daemon_joins_the_hub_as_a_runner(
    team: Machines, postgres: PostgresServer, hub_url: str
) -> None:
    model = FakeModelServer().start()
    try:
        laptop = team.make("laptop")
        laptop.configure(model.endpoint, hub_url, runner={"slots": 2, "repos": ["*"]})
        laptop.start()
        deadline = time.monotonic() + 20
        while not _hub_status(laptop)["joined"] and time.monotonic() < deadline:
            time.sleep(0.1)
        status = _hub_status(laptop)
        assert status == {
            "hub": "team-test",
            "runner": "laptop",
            "person": "laptop-person",
            "joined": True,
            "problem": None,
        }
        row = postgres.psql("SELECT name, person, slots, repos FROM runners", hub_url)
        assert row.strip() == 'laptop|laptop-person|2|["*"]'
        doctor = run_harness(["doctor"], env=laptop.env, cwd=laptop.workspace)
        assert "hub team-test: joined as runner laptop (person laptop-person)" in doctor.stdout
    finally:
        model.stop()


def test_a_daemon_started_before_its_hub_joins_once_the_hub_is_up(
    team: Machines, postgres: PostgresServer, hub_url: str
) -> None:
    model = FakeModelServer().start()
    try:
        desk = team.make("desk")
        away = hub_url.replace(str(postgres.socket_dir), "/tmp/no-hub-here")
        desk.configure(model.endpoint, away)
        desk.start()
        deadline = time.monotonic() + 20
        while "not reachable" not in str(_hub_status(desk)["problem"]):
            assert time.monotonic() < deadline, _hub_status(desk)
            time.sleep(0.2)
        status = _hub_status(desk)
        assert status["joined"] is False
        assert "hub team-test" in str(status["problem"])
        doctor = run_harness(["doctor"], env=desk.env, cwd=desk.workspace)
        assert "hub team-test: not reached" in doctor.stdout
        assert doctor.returncode != 0
        # The daemon serves on without its hub, on the very connection that waits for it.
        conn = desk.client()
        try:
            asking = conn.send_request("hub.sessions", {})
            assert conn.request("session.list", {}, timeout=3)["sessions"] == []
            with pytest.raises(errors.HubUnavailable, match="hub team-test"):
                conn.response(asking, timeout=15)
        finally:
            conn.close()
    finally:
        model.stop()
