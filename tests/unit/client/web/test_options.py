"""`harness web`'s command line (client/web/options.py) and the URL it prints."""

from __future__ import annotations

import pytest

from coding_harness.client.web.main import url_host
from coding_harness.client.web.options import WebOptions, WebUsageError, parse


def test_loopback_by_default() -> None:
    assert parse([]) == WebOptions(host="127.0.0.1", port=8765)


def test_host_port_and_allowed_names() -> None:
    options = parse(["--host", "0.0.0.0", "--port", "0", "--allow-host", "Box.TS.net."])
    assert options == WebOptions(host="0.0.0.0", port=0, allow_hosts=["box.ts.net"])
    assert url_host(options) == "box.ts.net"
    assert url_host(WebOptions(host="::1")) == "[::1]"
    assert url_host(WebOptions(host="0.0.0.0")) == "127.0.0.1"


@pytest.mark.parametrize(
    "argv", [["--port", "70000"], ["--port", "x"], ["--allow-host", "http://x"], ["--nope"]]
)
def test_bad_arguments_are_one_line(argv: list[str]) -> None:
    with pytest.raises(WebUsageError):
        parse(argv)


def test_help_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse(["--help"]) is None
    assert "--allow-host NAME" in capsys.readouterr().out
