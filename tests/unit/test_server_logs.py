"""The real-server suite reads from llama-cpp-python's log the prompt of every request,
the refused ones included (their answers carry no usage)."""

from __future__ import annotations

from tests.servers.real_servers import prompt_sizes

LOG = """\
llama_context: n_ctx = 4096
INFO:     127.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 200 OK
Llama.generate: 985 prefix-match hit, remaining 7 prompt tokens to eval
Llama.generate: 1000 prefix-match hit, remaining 1 prompt tokens to eval
INFO:     127.0.0.1:2 - "POST /v1/chat/completions HTTP/1.1" 200 OK
INFO:     127.0.0.1:3 - "GET /v1/models HTTP/1.1" 200 OK
Llama.generate: 1316 prefix-match hit, remaining 261 prompt tokens to eval
Llama.generate: 1577 prefix-match hit, remaining 2519 prompt tokens to eval
INFO:     127.0.0.1:4 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request
"""


def test_each_requests_first_evaluation_is_its_prompt() -> None:
    # The first request reuses nothing and logs no line; later lines of a request
    # are the server's own evaluations (a call's arguments, then the next call).
    assert prompt_sizes(LOG) == [None, 992, 1577]
