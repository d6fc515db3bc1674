"""`model.list {session}`: the model the session uses and those its server offers.

The REPL's bare `/model` shows it. The list is the server's own answer to
`GET <base>/models` (the OpenAI-compatible listing Ollama, LM Studio, llama.cpp
and the hosted APIs serve), asked with the session's key; a server that does not
list its models, or cannot be reached, gives an empty list and `error` saying
why, never a failed request.
"""

from __future__ import annotations

from typing import Any

import httpx

from coding_harness.daemon.methods.lookup import session_of, session_profile
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.turns.assemble import api_key
from coding_harness.protocol import methods as m
from coding_harness.protocol.config_files import parse_json

LIST_SECONDS = 5.0
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_MODELS = 500
MAX_MODEL_ID = 200


def models_url(endpoint: str) -> str:
    """`.../v1/chat/completions` -> `.../v1/models`."""
    base = endpoint.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if base.endswith(suffix):
            return base[: -len(suffix)] + "/models"
    return base + "/models"


def model_ids(body: bytes) -> list[str]:
    """The ids an OpenAI-style `{"data": [{"id": ...}]}` (or Ollama's `{"models": [{"name":
    ...}]}`) lists, in its order; [] for anything else."""
    try:
        data = parse_json(body.decode("utf-8", errors="replace"))
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    listed = data.get("data") if isinstance(data.get("data"), list) else data.get("models")
    ids: list[str] = []
    for item in listed if isinstance(listed, list) else []:
        name = (item.get("id") or item.get("name")) if isinstance(item, dict) else None
        if isinstance(name, str) and 0 < len(name) <= MAX_MODEL_ID and name.isprintable():
            ids.append(name)
    return list(dict.fromkeys(ids))[:MAX_MODELS]


async def _ask(url: str, key: str | None) -> tuple[list[str], str | None]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with (
            httpx.AsyncClient(timeout=LIST_SECONDS) as client,
            client.stream("GET", url, headers=headers) as answer,
        ):
            if answer.status_code != 200:
                return [], f"{url} answered HTTP {answer.status_code}"
            body = b""
            async for piece in answer.aiter_bytes():
                body += piece
                if len(body) > MAX_BODY_BYTES:
                    return [], f"{url} answered more than {MAX_BODY_BYTES >> 20} MiB"
    except (httpx.HTTPError, OSError) as exc:
        return [], f"{url} could not be asked ({type(exc).__name__})"
    found = model_ids(body)
    return found, None if found else f"{url} lists no models"


async def model_list(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    target = session_of(parts, session)
    profile = session_profile(parts, target)
    url = models_url(profile.endpoint)
    models, error = await _ask(url, api_key(target, profile))
    return {
        "session": target.id,
        "provider": profile.name,
        "model": profile.model,
        "endpoint": profile.endpoint,
        "models": models,
        "error": error,
    }


HANDLERS: dict[str, Handler] = {m.MODEL_LIST: model_list}
# Waits on a model server (up to LIST_SECONDS): the connection goes on answering meanwhile.
DETACHED = frozenset({m.MODEL_LIST})
