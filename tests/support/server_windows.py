"""What the fake model server answers about its context window, as each real server does.

`ServerWindow(kind, n_ctx)` makes the fake answer the look-ups the daemon makes
(`daemon/providers/window.py`) the way that server answers them:

- "ollama": `GET /api/ps` lists the loaded models with their `context_length`
  (when `loaded`), `POST /api/show` gives `parameters` (`num_ctx N` when the
  model file sets one, `num_ctx` here), `model_info` with the model's own
  maximum, and `capabilities` ("tools" unless `tools` is False); `GET /api/tags`
  lists `models` (each with its own capabilities through /api/show);
- "llama.cpp": `GET /props` with `default_generation_settings.n_ctx` (per slot)
  and `total_slots`;
- "lmstudio": `GET /api/v0/models` with `state` and `loaded_context_length`;
- "vllm": `GET /v1/models` with `max_model_len`;
- "openrouter": `GET /v1/models` with `context_length` and `top_provider`.

Every other path gets a 404, as a server that does not have it answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any


@dataclass
class ServerWindow:
    kind: str
    n_ctx: int
    model: str = "fake-model"
    loaded: bool = True  # ollama: the model is in memory (/api/ps lists it)
    num_ctx: int | None = None  # ollama: the model file's num_ctx
    model_max: int = 32_768  # ollama, lmstudio: the model's own maximum
    tools: bool = True  # ollama: "tools" among the model's capabilities
    # ollama: other models the server has, name -> whether it supports tools
    others: dict[str, bool] = field(default_factory=dict)
    slots: int = 1  # llama.cpp: total_slots


def _send(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _get_answer(window: ServerWindow, path: str) -> Any | None:
    kind, model = window.kind, window.model
    if kind == "ollama" and path == "/api/ps":
        loaded = [{"name": model, "model": model, "context_length": window.n_ctx}]
        return {"models": loaded if window.loaded else []}
    if kind == "ollama" and path == "/api/tags":
        names = [model, *window.others]
        return {"models": [{"name": n, "model": n} for n in names]}
    if kind == "llama.cpp" and path == "/props":
        settings = {"n_ctx": window.n_ctx, "params": {"n_predict": -1}}
        return {"default_generation_settings": settings, "total_slots": window.slots}
    if kind == "lmstudio" and path == "/api/v0/models":
        entry = {"id": model, "object": "model", "type": "llm", "state": "loaded"}
        entry |= {"max_context_length": window.model_max, "loaded_context_length": window.n_ctx}
        return {"object": "list", "data": [entry]}
    if kind == "vllm" and path == "/v1/models":
        return {"object": "list", "data": [{"id": model, "max_model_len": window.n_ctx}]}
    if kind == "openrouter" and path == "/v1/models":
        entry = {"id": model, "context_length": window.n_ctx}
        entry["top_provider"] = {"context_length": window.n_ctx}
        return {"data": [entry]}
    return None


def _show(window: ServerWindow, body: dict[str, Any]) -> Any | None:
    name = str(body.get("model") or body.get("name") or "")
    if name == window.model:
        tools = window.tools
    elif name in window.others:
        tools = window.others[name]
    else:
        return None
    parameters = f"num_ctx {window.num_ctx}" if window.num_ctx else ""
    capabilities = ["completion", *(["tools"] if tools else [])]
    return {
        "parameters": parameters,
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": window.model_max},
        "capabilities": capabilities,
    }


def answer_get(handler: BaseHTTPRequestHandler, window: ServerWindow | None) -> None:
    """A GET: the window look-up this server kind answers, else 404."""
    answer = None if window is None else _get_answer(window, handler.path.split("?")[0])
    if answer is None:
        _send(handler, 404, {"error": {"message": f"not found: {handler.path}"}})
    else:
        _send(handler, 200, answer)


def answers_post(path: str) -> bool:
    """Whether a POST to `path` is a window look-up rather than a chat request."""
    return path.split("?")[0] == "/api/show"


def answer_post(
    handler: BaseHTTPRequestHandler, window: ServerWindow | None, body: dict[str, Any]
) -> None:
    """POST /api/show: Ollama's model details, else 404."""
    answer = _show(window, body) if window is not None and window.kind == "ollama" else None
    if answer is None:
        _send(handler, 404, {"error": f"model '{body.get('model')}' not found"})
    else:
        _send(handler, 200, answer)
