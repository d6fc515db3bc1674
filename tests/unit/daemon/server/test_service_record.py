"""The discovery record: written atomically, removed only by its daemon, checked by clients."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from coding_harness.daemon.server.service import remove_record, write_record
from coding_harness.protocol import discovery


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def record(pid: int, socket: str = "/run/h.sock") -> dict[str, object]:
    return {"pid": pid, "socket": socket, "version": "0.1.0", "started_at": 1.0}


def test_record_is_written_through_a_rename_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "state" / "harnessd.json"
    write_record(path, record(os.getpid()))
    first_inode = path.stat().st_ino
    write_record(path, record(os.getpid(), "/run/other.sock"))
    assert path.stat().st_ino != first_inode  # replaced, never rewritten in place
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text())["socket"] == "/run/other.sock"
    assert [p.name for p in path.parent.iterdir()] == ["harnessd.json"]  # no temp file left


def test_a_daemon_removes_only_its_own_record(tmp_path: Path) -> None:
    path = tmp_path / "harnessd.json"
    write_record(path, record(12345))
    assert remove_record(path, os.getpid()) is False
    assert path.exists()
    assert remove_record(path, 12345) is True
    assert not path.exists()
    assert remove_record(path, 12345) is False


def test_read_record_none_when_absent_and_error_naming_the_fix_when_bad(tmp_path: Path) -> None:
    path = tmp_path / "harnessd.json"
    assert discovery.read_record(path) is None
    path.write_text("{not json")
    with pytest.raises(discovery.RecordError, match="delete it"):
        discovery.read_record(path)
    path.write_text(json.dumps({"pid": "12", "socket": "s", "version": "v", "started_at": 1}))
    with pytest.raises(discovery.RecordError, match="no valid pid"):
        discovery.read_record(path)
    write_record(path, record(7))
    assert discovery.read_record(path) == record(7)


def test_problems_name_every_mismatch() -> None:
    here = Path("/run/h.sock")
    mine = record(os.getpid(), str(here))
    assert discovery.problems(mine, socket_path=here, answering_pid=os.getpid()) == []
    assert discovery.problems(None, socket_path=here, answering_pid=None) == []
    gone = dead_pid()
    (dead,) = discovery.problems(record(gone, str(here)), socket_path=here, answering_pid=None)
    assert f"pid {gone}, which is not running" in dead
    (moved,) = discovery.problems(mine, socket_path=Path("/elsewhere"), answering_pid=None)
    assert "/run/h.sock" in moved and "/elsewhere" in moved
    (other,) = discovery.problems(mine, socket_path=here, answering_pid=1)
    assert "pid 1 answers" in other and "harness daemon restart" in other
    (missing,) = discovery.problems(None, socket_path=here, answering_pid=42)
    assert "no discovery record" in missing


def test_a_record_that_cannot_be_removed_is_reported_never_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """remove_record runs in the SIGTERM handler: raising there swallowed the first stop."""
    path = tmp_path / "harnessd.json"
    write_record(path, record(os.getpid()))

    def read_only_folder(self: Path, missing_ok: bool = False) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", read_only_folder)
    assert remove_record(path, os.getpid()) is False
    assert path.exists()
    assert "could not remove the discovery record" in caplog.text


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe",
        b"[" * 100_000,
        b'{"pid": 99999999999999999999, "socket": "s", "version": "v", "started_at": 1}',
    ],
    ids=["not UTF-8", "nested too deep", "pid out of range"],
)
def test_a_damaged_record_is_a_record_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "harnessd.json"
    path.write_bytes(content)
    with pytest.raises(discovery.RecordError, match="delete it"):
        discovery.read_record(path)
    assert remove_record(path, os.getpid()) is False
