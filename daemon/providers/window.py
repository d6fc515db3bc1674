"""The context window a model server gives a request, read from the server itself.

Each server says it its own way; `probe_window` asks in turn, and the first
answer that names a size wins:

- Ollama: `GET /api/ps` lists the loaded models with the `context_length` they
  were loaded with; a model not loaded yet gets `num_ctx` from `POST /api/show`
  (`parameters`, when its model file sets one), else the server's default,
  which the API does not tell: 4,096 tokens, Ollama's documented default
  (`OLLAMA_CONTEXT_LENGTH` changes it), capped at the model's own maximum
  (`model_info`'s `*.context_length`). That guess is marked `assumed`;
- llama.cpp's `llama-server`: `GET /props`, `default_generation_settings.n_ctx`
  (the context of one slot: `-c` divided by `--parallel`);
- LM Studio: `GET /api/v0/models`, the model's `loaded_context_length` once loaded;
- vLLM and OpenRouter (and servers like them): `GET <base>/models`, the
  model's `max_model_len` or `context_length` (OpenRouter's `top_provider`
  figure first).

The Ollama, llama.cpp and LM Studio look-ups are made only on a loopback
endpoint; a remote one is asked `/models` alone. Every look-up has a short
time limit, and one that fails, times out or answers something else just
gives no figure: the caller falls back to the configuration.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from coding_harness.daemon.config.profiles import LOOPBACK_HOSTS

log = logging.getLogger(__name__)

OLLAMA_DEFAULT_CTX = 4_096
PROBE_TIMEOUT = httpx.Timeout(2.0)
PROBE_LIMIT = 8 * 1024 * 1024  # OpenRouter's model list is a few MB


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerWindow:
    """What a server said about the window: `tokens` a request gets (None: nothing
    said), the kind of server (`server`), where the figure came from (`source`),
    and whether it is a default assumed for a server that does not tell (`assumed`)."""

    tokens: int | None = None
    server: str = ""
    source: str = ""
    assumed: bool = False
    model_max: int | None = None


NOTHING = ServerWindow()


def origin_of(endpoint: str) -> str:
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}"


def models_url(endpoint: str) -> str:
    """`.../v1/chat/completions` -> `.../v1/models`."""
    base = endpoint.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if base.endswith(suffix):
            return base[: -len(suffix)] + "/models"
    return base + "/models"


def is_loopback(endpoint: str) -> bool:
    return (urlsplit(endpoint).hostname or "").lower() in LOOPBACK_HOSTS


def _positive(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value > 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip()) or None
    return None


def same_model(name: Any, model: str) -> bool:
    """Ollama spells `qwen2.5-coder` as `qwen2.5-coder:latest` in its lists."""
    text = str(name or "")
    return text == model or text == f"{model}:latest" or f"{text}:latest" == model


# -- what each server's answer says (sans I/O) ---------------------------------


def from_ollama_ps(body: Any, model: str) -> ServerWindow | None:
    """None when this is not Ollama's answer; NOTHING when the model is not loaded."""
    if not isinstance(body, Mapping) or not isinstance(body.get("models"), list):
        return None
    for entry in body["models"]:
        if isinstance(entry, Mapping) and (
            same_model(entry.get("name"), model) or same_model(entry.get("model"), model)
        ):
            tokens = _positive(entry.get("context_length"))
            if tokens is not None:
                return ServerWindow(tokens=tokens, server="ollama", source="Ollama /api/ps")
    return NOTHING


def from_ollama_show(body: Any) -> ServerWindow:
    """`num_ctx` from the model file, else Ollama's default within the model's maximum."""
    if not isinstance(body, Mapping):
        return NOTHING
    info = body.get("model_info")
    model_max = None
    if isinstance(info, Mapping):
        model_max = next(
            (_positive(v) for k, v in info.items() if str(k).endswith(".context_length")), None
        )
    for line in str(body.get("parameters") or "").splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "num_ctx" and _positive(words[1]):
            tokens = _positive(words[1])
            return ServerWindow(
                tokens=tokens, server="ollama", source="Ollama num_ctx", model_max=model_max
            )
    default = min(OLLAMA_DEFAULT_CTX, model_max or OLLAMA_DEFAULT_CTX)
    return ServerWindow(
        tokens=default,
        server="ollama",
        source=f"Ollama's default ({OLLAMA_DEFAULT_CTX:,}): no num_ctx set",
        assumed=True,
        model_max=model_max,
    )


def from_llamacpp_props(body: Any) -> ServerWindow:
    if not isinstance(body, Mapping):
        return NOTHING
    settings = body.get("default_generation_settings")
    tokens = _positive(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
    tokens = tokens or _positive(body.get("n_ctx"))
    if tokens is None:
        return NOTHING
    return ServerWindow(tokens=tokens, server="llama.cpp", source="llama.cpp /props n_ctx")


def from_lmstudio(body: Any, model: str) -> ServerWindow:
    entry = _listed(body, model)
    if entry is None:
        return NOTHING
    tokens = _positive(entry.get("loaded_context_length"))
    if tokens is None:  # not loaded: it loads with a context the API does not tell
        return NOTHING
    return ServerWindow(
        tokens=tokens,
        server="lmstudio",
        source="LM Studio loaded_context_length",
        model_max=_positive(entry.get("max_context_length")),
    )


def from_models_list(body: Any, model: str) -> ServerWindow:
    """vLLM's `max_model_len`, OpenRouter's `context_length` (its top provider's first)."""
    entry = _listed(body, model)
    if entry is None:
        return NOTHING
    top = entry.get("top_provider")
    if isinstance(top, Mapping) and _positive(top.get("context_length")):
        return ServerWindow(
            tokens=_positive(top["context_length"]),
            server="openrouter",
            source="/models top_provider.context_length",
        )
    for key, server in (("max_model_len", "vllm"), ("context_length", ""), ("context_window", "")):
        tokens = _positive(entry.get(key))
        if tokens is not None:
            return ServerWindow(tokens=tokens, server=server, source=f"/models {key}")
    return NOTHING


def _listed(body: Any, model: str) -> Mapping[str, Any] | None:
    data = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, Mapping)]
    found = next((e for e in entries if same_model(e.get("id"), model)), None)
    if found is None and len(entries) == 1:
        return entries[0]  # a server of one model answers under any name
    return found


# -- asking --------------------------------------------------------------------


async def probe_window(
    client: httpx.AsyncClient, endpoint: str, model: str, api_key: str | None
) -> ServerWindow:
    """What the server at `endpoint` says about `model`'s window (NOTHING: it says
    nothing we understand)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    ask = Asker(client, headers)
    if is_loopback(endpoint):
        origin = origin_of(endpoint)
        ps = from_ollama_ps(await ask.get(f"{origin}/api/ps"), model)
        if ps is not None:
            if ps.tokens is not None:
                return ps
            return from_ollama_show(await ask.post(f"{origin}/api/show", {"model": model}))
        found = from_llamacpp_props(await ask.get(f"{origin}/props"))
        if found.tokens is None:
            found = from_lmstudio(await ask.get(f"{origin}/api/v0/models"), model)
        if found.tokens is not None:
            return found
    return from_models_list(await ask.get(models_url(endpoint)), model)


class Asker:
    """GET or POST one look-up; the JSON answer, or None for anything else."""

    def __init__(self, client: httpx.AsyncClient, headers: dict[str, str]) -> None:
        self._client = client
        self._headers = headers

    async def get(self, url: str) -> Any:
        return await self._ask("GET", url, None)

    async def post(self, url: str, body: Mapping[str, Any]) -> Any:
        return await self._ask("POST", url, body)

    async def _ask(self, method: str, url: str, body: Mapping[str, Any] | None) -> Any:
        try:
            async with self._client.stream(
                method, url, json=body, headers=self._headers, timeout=PROBE_TIMEOUT
            ) as response:
                if not response.is_success:
                    return None
                data = bytearray()
                async for piece in response.aiter_bytes():
                    data += piece
                    if len(data) > PROBE_LIMIT:
                        return None
            return json.loads(bytes(data))
        except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
            log.debug("window look-up %s %s: %s", method, url, exc)
            return None
