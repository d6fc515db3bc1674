"""Which Host and Origin headers `harness web` answers (client/web/hosts.py)."""

from __future__ import annotations

import pytest

from coding_harness.client.web.hosts import HostPolicy

LOOPBACK = HostPolicy("127.0.0.1", 8765)
WILDCARD = HostPolicy("0.0.0.0", 8765, frozenset({"box.tail1234.ts.net"}))


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:8765", "localhost:9000", "LOCALHOST", "[::1]:22", "127.0.0.2:1", "app.localhost:5"],
)
def test_loopback_names_on_any_port_are_served(host: str) -> None:
    assert LOOPBACK.host_ok(host, "127.0.0.1")


@pytest.mark.parametrize(
    "host",
    [
        None,
        "",
        "evil.example",
        "evil.example:8765",
        "127.0.0.1.nip.io:8765",
        "a@127.0.0.1",
        "127.0.0.1:8765/x",
        "localhost:notaport",
        "192.168.1.5:8765",
    ],
)
def test_other_names_are_refused(host: str | None) -> None:
    assert not LOOPBACK.host_ok(host, "127.0.0.1")


def test_on_a_wildcard_the_address_the_request_came_to_and_allowed_names_are_served() -> None:
    assert WILDCARD.host_ok("192.168.1.5:8765", "192.168.1.5")
    assert not WILDCARD.host_ok("192.168.1.5:9999", "192.168.1.5")
    assert not WILDCARD.host_ok("192.168.1.6:8765", "192.168.1.5")
    assert WILDCARD.host_ok("box.tail1234.ts.net", "100.64.0.1")
    assert not WILDCARD.host_ok("other.tail1234.ts.net", "100.64.0.1")


def test_a_named_address_is_served_on_its_port() -> None:
    policy = HostPolicy("10.0.0.7", 8080)
    assert policy.host_ok("10.0.0.7:8080", "10.0.0.7")
    assert not policy.host_ok("10.0.0.7:8081", "10.0.0.7")


@pytest.mark.parametrize(
    ("origin", "host", "ok"),
    [
        ("http://127.0.0.1:8765", "127.0.0.1:8765", True),
        ("http://localhost:9000", "localhost:9000", True),
        ("https://box.ts.net", "box.ts.net", True),
        ("http://127.0.0.1:8766", "127.0.0.1:8765", False),
        ("http://evil.example", "127.0.0.1:8765", False),
        ("null", "127.0.0.1:8765", False),
        (None, "127.0.0.1:8765", False),
        ("http://127.0.0.1:8765/path", "127.0.0.1:8765", False),
        ("file://127.0.0.1:8765", "127.0.0.1:8765", False),
    ],
)
def test_an_origin_must_be_the_site_itself(origin: str | None, host: str, ok: bool) -> None:
    assert LOOPBACK.origin_ok(origin, host) is ok
