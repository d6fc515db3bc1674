"""The hub goes away under a runner: nothing local waits, and no event is lost or doubled.

A fake model streams a long answer, one short delta per chunk (about 10,000
events), at a steady pace; `halfway` is set midway. PostgreSQL is restarted
then (`postgres.restart()`), or stopped until the turn is over; afterwards the
hub's events of the session are exactly the local store's: the same seqs, no
gap, none twice.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.integration.test_hub_mirror import (
    hub_rows,
    hub_seqs,
    local_rows,
    local_seqs,
    start_on_hub,
)
from tests.support.fake_model_server import (
    FakeModelServer,
    Reply,
    start_stream,
    stream_chunks,
    write_piece,
)
from tests.support.hub_machines import Machines
from tests.support.postgres import PostgresServer
from tests.support.processes import events_until_finished, run_harness, start_harness
from tests.support.waiting import wait_for


@dataclass
class LongAnswer:
    """An answer streamed as `pieces` deltas, a few at a time, `halfway` set midway."""

    pieces: int
    per_millisecond: int = 5
    halfway: threading.Event = field(default_factory=threading.Event)
    # When given, the stream waits at halfway until it is set.
    go_on: threading.Event | None = None

    def perform(self, handler: BaseHTTPRequestHandler, released: threading.Event) -> None:
        start_stream(handler)
        for index in range(self.pieces):
            chunk = {"choices": [{"index": 0, "delta": {"content": f"w{index} "}}]}
            write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
            if index == self.pieces // 2:
                self.halfway.set()
                if self.go_on is not None:
                    self.go_on.wait(60)
            if index % self.per_millisecond == 0:
                if released.is_set():
                    return
                time.sleep(0.001)
        for chunk in stream_chunks(Reply(content=""))[-2:]:  # the finish, then the usage
            write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
        write_piece(handler, b"data: [DONE]\n\n")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


def test_postgres_restarted_during_ten_thousand_events_loses_and_doubles_none(
    team: Machines, postgres: PostgresServer, hub_url: str
) -> None:
    answer = LongAnswer(pieces=10_000)
    with FakeModelServer() as model:
        laptop = start_on_hub(team, "laptop", model.endpoint, hub_url)
        model.add(answer)
        with laptop.client("laptop-terminal") as conn:
            session = conn.request("session.create", {"cwd": str(laptop.workspace)})["session"]
            conn.request("session.attach", {"session": session})
            conn.request("session.submit", {"session": session, "text": "a long answer"})
            assert answer.halfway.wait(60)
            wait_for(lambda: len(hub_seqs(postgres, hub_url, session)) > 100, "events in the hub")
            postgres.restart()
            events = events_until_finished(conn, timeout=120)
        assert events[-1]["data"]["exit_code"] == 0
        last = events[-1]["seq"]
        wait_for(lambda: local_seqs(laptop, session)[-1:] == [last], "the local store")
        local = local_seqs(laptop, session)
        assert len(local) >= 10_000
        assert local == list(range(1, last + 1))
        wait_for(lambda: hub_seqs(postgres, hub_url, session) == local, "the hub's events", 60)
        assert hub_rows(
            postgres,
            hub_url,
            f"SELECT count(*), count(DISTINCT seq), max(seq) FROM events WHERE session_id ="
            f" '{session}'",
        ) == [[str(len(local)), str(len(local)), str(last)]]


def test_a_runner_cut_off_mid_turn_finishes_the_turn_and_the_hub_catches_up(
    team: Machines, postgres: PostgresServer, hub_url: str
) -> None:
    go_on = threading.Event()
    answer = LongAnswer(pieces=3000, go_on=go_on)
    with FakeModelServer() as model:
        laptop = start_on_hub(team, "laptop", model.endpoint, hub_url)
        model.add(answer)
        oneshot = start_harness(["-p", "a long answer"], env=laptop.env, cwd=laptop.workspace)
        try:
            assert answer.halfway.wait(60)
            postgres.stop()
            try:
                go_on.set()  # the second half streams with the hub away
                _out, err = oneshot.communicate(timeout=60)
                assert oneshot.returncode == 0, err  # the turn ended, and well, without it
                with laptop.client() as conn:
                    (session,) = [s["session"] for s in conn.request("session.list")["sessions"]]
            finally:
                postgres.start()
        finally:
            go_on.set()
            if oneshot.poll() is None:
                oneshot.kill()
                oneshot.communicate()
        wait_for(lambda: local_seqs(laptop, session)[-1:] != [], "the local store")
        local = wait_for(
            lambda: (seqs := local_seqs(laptop, session)) and seqs[-1] > 3000 and seqs,
            "the turn's events in the local store",
        )
        assert local == list(range(1, local[-1] + 1))
        wait_for(lambda: hub_seqs(postgres, hub_url, session) == local, "the hub catching up", 60)
        where = f"WHERE session_id = '{session}'"
        assert hub_rows(postgres, hub_url, f"SELECT state, exit_code FROM turns {where}") == [
            ["finished", "0"]
        ]
        wait_for(
            lambda: (
                hub_rows(
                    postgres,
                    hub_url,
                    f"SELECT state, last_seq FROM sessions WHERE id = '{session}'",
                )
                == [["idle", str(local[-1])]]
            ),
            "the session's row",
        )


def test_sessions_run_before_the_hub_came_back_reach_it_whole(
    team: Machines, postgres: PostgresServer, hub_url: str
) -> None:
    """A runner that never reached its hub yet: its sessions wait in the local store, and the
    first connection copies them (the catch-up), not only what is written afterwards."""
    with FakeModelServer() as model:
        laptop = start_on_hub(team, "laptop", model.endpoint, hub_url)
        laptop.stop()
        postgres.stop()
        try:
            laptop.start()
            for text in ("first", "second"):
                model.add(Reply(content=f"Answer to the {text}."))
                done = run_harness(["-p", text], env=laptop.env, cwd=laptop.workspace)
                assert done.returncode == 0, done.stderr
        finally:
            postgres.start()
        stored = local_rows(laptop, "SELECT id FROM sessions ORDER BY created_at")
        assert len(stored) == 2
        for (session,) in stored:
            local = wait_for(lambda s=session: local_seqs(laptop, s), "the local events")
            wait_for(
                lambda s=session, seqs=local: hub_seqs(postgres, hub_url, s) == seqs,
                "the hub catching up",
                60,
            )
        titles = hub_rows(postgres, hub_url, "SELECT title FROM sessions ORDER BY created_at")
        assert titles == [["first"], ["second"]]
