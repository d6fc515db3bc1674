"""First run without a config: which model servers answer on this machine, and which
API key variables are set.

`discover` asks `GET /v1/models` of the usual local servers (Ollama 11434, LM Studio
1234, llama.cpp 8080, vLLM 8000), all at once, on the loopback address only, each
bounded by `PROBE_SECONDS`; a port that refuses, hangs, answers garbage or lists no
model is skipped, never an error. A server that answers is used only when its
listening socket is in a process of this user (`socket_owner.py`): another local
user's server on a usual port would otherwise get the prompts and the files the
model reads; it is listed in `skipped`, with why, for `harness doctor`. Then it
looks for the usual key variables in the submitting client's environment and the
daemon's. Each find becomes a ready profile; the first server (in that order),
else the first key, is `chosen`.

`CODING_HARNESS_PROBE_PORTS` (the daemon's environment; `NAME=PORT,...`, or `none`)
replaces the ports asked, for tests and unusual set-ups; the host stays 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from coding_harness.daemon.providers.socket_owner import listener_owner
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME, parse_json

PROBE_PORTS_VARIABLE = "CODING_HARNESS_PROBE_PORTS"
LOOPBACK = "127.0.0.1"
# Per probe, connect included: loopback answers in milliseconds or not at all.
PROBE_SECONDS = 0.3
CONNECT_SECONDS = 0.15
MAX_BODY_BYTES = 256 * 1024
MAX_MODELS = 50
MAX_MODEL_ID = 200
CONFIG_FILE = f"~/{GLOBAL_CONFIG_NAME}"

# (profile name, label, port), in the order a server is preferred.
LOCAL_SERVERS: tuple[tuple[str, str, int], ...] = (
    ("ollama", "Ollama", 11434),
    ("lmstudio", "LM Studio", 1234),
    ("llamacpp", "llama.cpp", 8080),
    ("vllm", "vLLM", 8000),
)

# (profile name, key variable, endpoint, default model), in the order a key is preferred.
KEY_PROFILES: tuple[tuple[str, str, str, str], ...] = (
    ("openai", "OPENAI_API_KEY", "https://api.openai.com/v1/chat/completions", "gpt-4.1-mini"),
    (
        "openrouter",
        "OPENROUTER_API_KEY",
        "https://openrouter.ai/api/v1/chat/completions",
        "qwen/qwen3-coder",
    ),
    (
        "fireworks",
        "FIREWORKS_API_KEY",
        "https://api.fireworks.ai/inference/v1/chat/completions",
        "accounts/fireworks/models/deepseek-v3",
    ),
    (
        "groq",
        "GROQ_API_KEY",
        "https://api.groq.com/openai/v1/chat/completions",
        "llama-3.3-70b-versatile",
    ),
    ("deepseek", "DEEPSEEK_API_KEY", "https://api.deepseek.com/chat/completions", "deepseek-chat"),
    (
        "together",
        "TOGETHER_API_KEY",
        "https://api.together.xyz/v1/chat/completions",
        "Qwen/Qwen2.5-Coder-32B-Instruct",
    ),
    (
        "mistral",
        "MISTRAL_API_KEY",
        "https://api.mistral.ai/v1/chat/completions",
        "codestral-latest",
    ),
    (
        "cerebras",
        "CEREBRAS_API_KEY",
        "https://api.cerebras.ai/v1/chat/completions",
        "llama-3.3-70b",
    ),
    ("xai", "XAI_API_KEY", "https://api.x.ai/v1/chat/completions", "grok-3-mini"),
    (
        "gemini",
        "GEMINI_API_KEY",
        "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
        "gemini-2.5-flash",
    ),
)
KEY_VARIABLES: tuple[str, ...] = tuple(variable for _, variable, _, _ in KEY_PROFILES)

_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_PRINTABLE_ID = re.compile(r"[\x21-\x7e]+")


@dataclass(frozen=True, kw_only=True, slots=True)
class ProbeTarget:
    name: str
    label: str
    port: int


@dataclass(frozen=True, kw_only=True, slots=True)
class FoundServer:
    name: str
    label: str
    port: int
    models: tuple[str, ...]

    @property
    def endpoint(self) -> str:
        return f"http://localhost:{self.port}/v1/chat/completions"

    @property
    def model(self) -> str:
        """The first model that is not an embedding model, else the first one."""
        chat = [m for m in self.models if "embed" not in m.lower()]
        return (chat or list(self.models))[0]

    def profile(self) -> dict[str, Any]:
        return {"type": "openai", "endpoint": self.endpoint, "model": self.model}

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "port": self.port,
            "endpoint": self.endpoint,
            "models": list(self.models),
            "model": self.model,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class SkippedServer:
    """A server that answered but is not the user's: never used."""

    name: str
    label: str
    port: int
    why: str

    def to_wire(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "port": self.port, "why": self.why}


@dataclass(frozen=True, kw_only=True, slots=True)
class FoundKey:
    name: str
    variable: str
    endpoint: str
    model: str

    def profile(self) -> dict[str, Any]:
        return {
            "type": "openai",
            "endpoint": self.endpoint,
            "api_key_env": self.variable,
            "model": self.model,
        }

    def to_wire(self) -> dict[str, Any]:
        return {"name": self.name, "variable": self.variable, "model": self.model}


@dataclass(frozen=True, kw_only=True, slots=True)
class Discovery:
    servers: tuple[FoundServer, ...] = ()
    keys: tuple[FoundKey, ...] = ()
    tried: tuple[ProbeTarget, ...] = ()
    skipped: tuple[SkippedServer, ...] = ()
    seconds: float = 0.0

    @property
    def chosen(self) -> str | None:
        """The first server found, else the first key."""
        names = list(self.profiles())
        return names[0] if names else None

    def profiles(self) -> dict[str, dict[str, Any]]:
        """Every find as a raw profile, as a config file would spell it."""
        found: dict[str, dict[str, Any]] = {}
        for server in self.servers:
            found.setdefault(server.name, server.profile())
        for key in self.keys:
            found.setdefault(key.name, key.profile())
        return found

    def source(self, name: str) -> str:
        """Where the profile `name` came from, for a person."""
        for server in self.servers:
            if server.name == name:
                return f"{server.label} answering at localhost:{server.port}"
        for key in self.keys:
            if key.name == name:
                return f"{key.variable} is set"
        return "nowhere"

    def nothing_found(self) -> str:
        """One line: what was tried, and the file to write."""
        ports = ", ".join(f"{t.port} ({t.label})" for t in self.tried) or "no port"
        return (
            f"no config file, and nothing found to use: no model server answers on "
            f"localhost {ports} and none of {', '.join(KEY_VARIABLES)} is set; start one, "
            f"export a key, or write {CONFIG_FILE} (see docs/configuration.md)"
        )

    def to_wire(self) -> dict[str, Any]:
        return {
            "servers": [server.to_wire() for server in self.servers],
            "keys": [key.to_wire() for key in self.keys],
            "profiles": self.profiles(),
            "chosen": self.chosen,
            "tried": [{"name": t.name, "label": t.label, "port": t.port} for t in self.tried],
            "skipped": [skipped.to_wire() for skipped in self.skipped],
            "seconds": round(self.seconds, 3),
            "config_file": CONFIG_FILE,
        }


def probe_targets(environ: Mapping[str, str]) -> tuple[ProbeTarget, ...]:
    """The usual servers, or those `CODING_HARNESS_PROBE_PORTS` names (bad entries skipped)."""
    spec = environ.get(PROBE_PORTS_VARIABLE)
    if spec is None:
        return tuple(ProbeTarget(name=n, label=label, port=p) for n, label, p in LOCAL_SERVERS)
    targets: list[ProbeTarget] = []
    for entry in spec.split(","):
        name, _, port = entry.strip().partition("=")
        if _NAME.fullmatch(name) and port.isdigit() and 0 < int(port) < 65536:
            targets.append(ProbeTarget(name=name, label=name, port=int(port)))
    return tuple(targets)


def _model_ids(body: bytes) -> tuple[str, ...]:
    """The ids an OpenAI-style `{"data": [{"id": ...}]}` lists; () for anything else."""
    try:
        data = parse_json(body)  # a hostile port may answer JSON nested past the parser
    except ValueError:
        return ()
    listed = data.get("data") if isinstance(data, dict) else None
    if not isinstance(listed, list):
        return ()
    ids: list[str] = []
    for item in listed[:MAX_MODELS]:
        model = item.get("id") if isinstance(item, dict) else None
        if isinstance(model, str) and len(model) <= MAX_MODEL_ID and _PRINTABLE_ID.fullmatch(model):
            ids.append(model)
    return tuple(dict.fromkeys(ids))


async def _read_capped(client: httpx.AsyncClient, url: str) -> bytes | None:
    async with client.stream("GET", url) as answer:
        if answer.status_code != 200:
            return None
        body = b""
        async for piece in answer.aiter_bytes():
            body += piece
            if len(body) > MAX_BODY_BYTES:
                return None
        return body


async def _probe(client: httpx.AsyncClient, target: ProbeTarget) -> FoundServer | None:
    url = f"http://{LOOPBACK}:{target.port}/v1/models"
    try:
        body = await asyncio.wait_for(_read_capped(client, url), PROBE_SECONDS)
    except (httpx.HTTPError, TimeoutError, OSError, ValueError):
        return None
    models = _model_ids(body) if body is not None else ()
    if not models:
        return None
    return FoundServer(name=target.name, label=target.label, port=target.port, models=models)


async def find_servers(
    targets: tuple[ProbeTarget, ...],
) -> tuple[tuple[FoundServer, ...], tuple[SkippedServer, ...]]:
    """The targets that list at least one model and are the user's, in the targets'
    order; and those that list models but are another user's."""
    answering = await _answering(targets)
    owners = await asyncio.gather(
        *(asyncio.to_thread(listener_owner, found.port) for found in answering)
    )
    ours = tuple(found for found, owner in zip(answering, owners, strict=True) if owner.ours)
    skipped = tuple(
        SkippedServer(name=found.name, label=found.label, port=found.port, why=owner.why)
        for found, owner in zip(answering, owners, strict=True)
        if not owner.ours
    )
    return ours, skipped


async def _answering(targets: tuple[ProbeTarget, ...]) -> tuple[FoundServer, ...]:
    if not targets:
        return ()
    timeout = httpx.Timeout(PROBE_SECONDS, connect=CONNECT_SECONDS)
    # Plain http to 127.0.0.1 only: no proxy from the environment, no redirect followed,
    # and no certificate store loaded (verify=False; it costs ~40 ms and nothing here is TLS).
    async with httpx.AsyncClient(
        timeout=timeout, trust_env=False, follow_redirects=False, verify=False
    ) as client:
        answers = await asyncio.gather(*(_probe(client, target) for target in targets))
    return tuple(found for found in answers if found is not None)


def find_keys(*environments: Mapping[str, str]) -> tuple[FoundKey, ...]:
    """The usual key variables set (non-empty) in any of `environments`."""
    return tuple(
        FoundKey(name=name, variable=variable, endpoint=endpoint, model=model)
        for name, variable, endpoint, model in KEY_PROFILES
        if any(env.get(variable) for env in environments)
    )


async def discover(
    client_env: Mapping[str, str], daemon_env: Mapping[str, str] | None = None
) -> Discovery:
    """Servers on this machine and key variables from the client's, then the daemon's,
    environment."""
    own = os.environ if daemon_env is None else daemon_env
    targets = probe_targets(own)
    loop = asyncio.get_running_loop()
    started = loop.time()
    servers, skipped = await find_servers(targets)
    return Discovery(
        servers=servers,
        keys=find_keys(client_env, own),
        tried=targets,
        skipped=skipped,
        seconds=loop.time() - started,
    )
