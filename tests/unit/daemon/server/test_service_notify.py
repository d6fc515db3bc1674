"""sd_notify and the socket-activation hand-over, without starting a daemon."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from coding_harness.daemon.server.service import (
    Notifier,
    ServiceContext,
    ServiceError,
    take_listen_socket,
)
from tests.support.service import NotifyRecorder


def test_notifier_sends_ready_and_stopping_to_a_path(tmp_path: Path) -> None:
    recorder = NotifyRecorder(tmp_path / "notify")
    try:
        notifier = Notifier(recorder.address)
        assert notifier.ready("serving on /x")
        assert notifier.stopping("stopping")
        assert "STATUS=serving on /x" in recorder.wait_for("READY=1").splitlines()
        recorder.wait_for("STOPPING=1")
    finally:
        recorder.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract sockets are Linux-only")
def test_notifier_reaches_an_abstract_address() -> None:
    recorder = NotifyRecorder()
    try:
        assert recorder.address.startswith("@")
        assert Notifier(recorder.address).ready("up")
        recorder.wait_for("READY=1")
    finally:
        recorder.close()


def test_notifier_without_socket_or_with_a_dead_one_does_nothing(tmp_path: Path) -> None:
    assert Notifier(None).ready("up") is False
    assert Notifier("").stopping("down") is False
    assert Notifier(str(tmp_path / "nobody-listens")).ready("up") is False
    assert Notifier("vsock:2:1234").ready("up") is False


def test_context_reads_and_unsets_the_service_variables(tmp_path: Path) -> None:
    environ = {
        "NOTIFY_SOCKET": str(tmp_path / "n"),
        "LISTEN_FDS": "1",
        "LISTEN_PID": "1",  # another process: not for us
        "LISTEN_FDNAMES": "harnessd.socket",
        "HOME": "/home/x",
    }
    context = ServiceContext.from_environment(environ, record_path=tmp_path / "r.json")
    assert environ == {"HOME": "/home/x"}
    assert context.notifier.address == str(tmp_path / "n")
    assert context.listen_socket is None and not context.socket_activated


def test_listen_socket_is_taken_only_for_our_pid(tmp_path: Path) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "s"))
    listener.listen(1)
    try:
        fd = listener.fileno()
        assert take_listen_socket({"LISTEN_FDS": "1", "LISTEN_PID": "1"}, first_fd=fd) is None
        assert take_listen_socket({"LISTEN_FDS": "0", "LISTEN_PID": "7"}, pid=7) is None
        assert take_listen_socket({}, pid=7) is None
        environ = {"LISTEN_FDS": "1", "LISTEN_PID": "7"}
        adopted = take_listen_socket(environ, pid=7, first_fd=fd)
        assert adopted is not None and environ == {}
        assert adopted.getsockname() == str(tmp_path / "s")
        assert not adopted.get_inheritable()
        adopted.detach()  # the test's own socket still owns the fd
    finally:
        listener.close()


def test_an_unusable_inherited_socket_is_refused_with_the_fix(tmp_path: Path) -> None:
    datagram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    unbound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with pytest.raises(ServiceError, match="ListenStream"):
            take_listen_socket(
                {"LISTEN_FDS": "1", "LISTEN_PID": "7"}, pid=7, first_fd=datagram.fileno()
            )
        with pytest.raises(ServiceError, match="ListenStream"):
            take_listen_socket(
                {"LISTEN_FDS": "1", "LISTEN_PID": "7"}, pid=7, first_fd=unbound.fileno()
            )
        with pytest.raises(ServiceError, match="not a number"):
            take_listen_socket({"LISTEN_FDS": "x", "LISTEN_PID": "7"}, pid=7)
    finally:
        datagram.close()
        unbound.close()
