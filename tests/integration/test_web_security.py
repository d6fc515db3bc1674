"""`harness web` lets nothing in from the network (issue 29): every attack, over real HTTP.

One `harness web` process on a real daemon serves the module; the rate limit
and `--allow-host` get a bridge of their own (a rate-limited address is locked
out for a minute, which would lock the other tests out too).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import aiohttp
import httpx
import pytest

from tests.support.web_bridge import WebStack, login, start_web, stop_web, web_stack

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stack() -> Iterator[WebStack]:
    with web_stack() as built:
        yield built


@pytest.fixture
def web(stack: WebStack) -> Iterator[httpx.Client]:
    client = login(stack)
    yield client
    client.close()


def _bare(stack: WebStack) -> httpx.Client:
    return httpx.Client(base_url=stack.base, timeout=30)


@pytest.mark.parametrize(
    "path", ["/", "/api/sessions", "/s/abc", "/static/app.js", "/s/abc/events"]
)
def test_nothing_is_served_without_the_token(stack: WebStack, path: str) -> None:
    with _bare(stack) as bare:
        answer = bare.get(path)
    assert answer.status_code == 401
    assert "open the URL" in answer.text
    assert "sessions" not in answer.text.lower().replace("harness web", "")


def test_the_token_becomes_a_strict_httponly_cookie_and_leaves_the_address_bar(
    stack: WebStack,
) -> None:
    with _bare(stack) as bare:
        answer = bare.get("/", params={"token": stack.token})
        cookie = answer.headers["set-cookie"]
        assert answer.status_code == 200
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert stack.token not in cookie and stack.token not in answer.text
        refresh = re.search(r'http-equiv="refresh" content="0; url=([^"]*)"', answer.text)
        assert refresh is not None and refresh.group(1) == "/"
        page = bare.get(refresh.group(1))
    assert page.status_code == 200 and "data-page='sessions'" in page.text


def test_a_wrong_token_or_cookie_is_refused(stack: WebStack) -> None:
    with _bare(stack) as bare:
        assert bare.get("/", params={"token": "x" * 43}).status_code == 403
        assert "set-cookie" not in bare.get("/", params={"token": "nope"}).headers
        bare.cookies.set("harness_web", "made-up")
        assert bare.get("/api/sessions").status_code == 401


def test_wrong_tokens_are_rate_limited_and_then_even_the_right_one_waits(
    stack: WebStack,
) -> None:
    process, base, token, _lines = start_web(stack.sandbox)
    try:
        with httpx.Client(base_url=base, timeout=30) as bare:
            codes = [bare.get("/", params={"token": f"guess{n}"}).status_code for n in range(6)]
            locked = bare.get("/", params={"token": token})
        assert codes[:5] == [403] * 5 and codes[5] == 429
        assert locked.status_code == 429 and int(locked.headers["retry-after"]) > 0
    finally:
        stop_web(process)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}"])
def test_a_foreign_host_is_refused_dns_rebinding(
    stack: WebStack, web: httpx.Client, host: str
) -> None:
    port = stack.host.split(":")[1]
    answer = web.get("/api/sessions", headers={"Host": host.format(port=port)})
    assert answer.status_code == 421
    assert "--allow-host" in answer.text


@pytest.mark.parametrize("host", ["localhost:9000", "127.0.0.1:8080", "[::1]:22"])
def test_a_loopback_name_on_any_port_is_served_as_an_ssh_tunnel_sends_it(
    web: httpx.Client, host: str
) -> None:
    assert web.get("/api/sessions", headers={"Host": host}).status_code == 200


def test_allow_host_admits_a_tailscale_name(stack: WebStack) -> None:
    process, base, token, _lines = start_web(stack.sandbox, "--allow-host", "box.tail1234.ts.net")
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            named = {"Host": "box.tail1234.ts.net"}
            assert client.get("/", params={"token": token}, headers=named).status_code == 200
            assert client.get("/api/sessions", headers=named).status_code == 200
            other = client.get("/api/sessions", headers={"Host": "other.tail1234.ts.net"})
        assert other.status_code == 421
    finally:
        stop_web(process)


def test_a_state_change_needs_our_own_origin(stack: WebStack, web: httpx.Client) -> None:
    url = "/api/s/nosuchsession/cancel"
    assert web.post(url, json={}).status_code == 403  # no Origin at all
    assert web.post(url, json={}, headers={"Origin": "http://evil.example"}).status_code == 403
    port = stack.host.split(":")[1]
    other_port = {"Origin": f"http://127.0.0.1:{int(port) + 1}"}
    assert web.post(url, json={}, headers=other_port).status_code == 403
    ours = web.post(url, json={}, headers={"Origin": stack.origin})
    assert ours.status_code == 404  # past the gate: the daemon knows no such session


def test_the_event_stream_refuses_a_foreign_origin(stack: WebStack, web: httpx.Client) -> None:
    cookie = web.cookies["harness_web"]

    async def handshake(origin: str) -> int:
        async with aiohttp.ClientSession(cookies={"harness_web": cookie}) as http:
            try:
                async with http.ws_connect(
                    f"{stack.base}s/none/events", headers={"Origin": origin}
                ) as ws:
                    await ws.close()
                    return 101
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status

    assert asyncio.run(handshake("http://evil.example")) == 403
    assert asyncio.run(handshake(stack.origin)) == 101


def test_no_cors_ever(stack: WebStack, web: httpx.Client) -> None:
    preflight = web.request(
        "OPTIONS",
        "/api/sessions",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status_code == 405
    for answer in (preflight, web.get("/api/sessions", headers={"Origin": "http://evil.example"})):
        assert not [name for name in answer.headers if name.lower().startswith("access-control")]


def test_every_answer_has_a_strict_content_security_policy(web: httpx.Client) -> None:
    for path in ("/", "/static/app.js", "/api/sessions", "/s/none"):
        policy = web.get(path).headers["content-security-policy"]
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    page = web.get("/").text
    assert "<script>" not in page and " on" not in page.replace(" one ", "")


def test_a_big_body_is_refused(stack: WebStack, web: httpx.Client) -> None:
    answer = web.post(
        "/api/s/nosuchsession/submit",
        content=b'{"text": "' + b"x" * (2 * 1024 * 1024) + b'"}',
        headers={"Origin": stack.origin, "Content-Type": "application/json"},
    )
    assert answer.status_code == 413


@pytest.mark.parametrize("path", ["/static/../../../etc/passwd", "/static/%2e%2e%2fpyproject.toml"])
def test_no_path_from_the_url_reaches_the_file_system(web: httpx.Client, path: str) -> None:
    answer = web.get(path)
    assert answer.status_code == 404
    assert "root:" not in answer.text and "[project]" not in answer.text


def test_a_task_with_markup_is_shown_as_text(stack: WebStack, web: httpx.Client) -> None:
    from tests.support import waiting
    from tests.support.fake_model_server import Reply
    from tests.support.processes import client

    stack.model.add(Reply(content="ok"))
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    with client(stack.sandbox.socket, "tester", approvals=False) as conn:
        made = conn.request("session.create", {"cwd": str(stack.sandbox.workspace)})
        conn.request("session.submit", {"session": made["session"], "text": evil})
        waiting.wait_for(
            lambda: any(s["title"] for s in web.get("/api/sessions").json()["sessions"]),
            "the session's title",
        )
        page = web.get(f"/s/{made['session']}").text
        listing = web.get("/").text
    for html in (page, listing):
        assert "<script>alert" not in html and "<img src=x" not in html
    title = re.search(r"<h1 id='title'>(.*?)</h1>", page)
    assert title is not None and "&lt;script&gt;alert(1)&lt;/script&gt;" in title.group(1), page
