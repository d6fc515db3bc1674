"""`harness doctor` checks of the configuration: files, providers, keys, endpoints.

The client never imports the daemon, so the files are read here as plain
JSON: valid, a top-level object, known keys, and the profile fields the
daemon needs (type, an http(s) endpoint, a model). A project file's
providers count only once `harness trust` trusted it, as in the daemon.
Each provider's endpoint then gets one cheap request (GET of the `/models`
beside `/chat/completions`, short timeout): any HTTP answer means reachable;
401/403 means the key was refused. httpx is imported only for that.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_harness.protocol import trust
from coding_harness.protocol.config_files import (
    SEARCH_KEY_VARIABLES,
    deep_merge,
    global_config,
    legacy_config,
    parse_json,
    project_config,
)
from coding_harness.protocol.project_files import ProjectFileRefused, read_project_file
from coding_harness.protocol.vocabulary import BUILTIN_PROVIDER, LOCAL_ENDPOINT

TOP_KEYS = frozenset(
    {
        *("providers", "default_provider", "agent", "search", "retry", "quiet", "plain"),
        *("debug", "mcp_servers", "hooks", "notify"),
    }
)
LEGACY_KEYS = TOP_KEYS | {"provider", "model"}
PROFILE_KEYS = frozenset(
    {
        *("type", "endpoint", "model", "api_key_env", "generation", "pricing", "retry"),
        *("timeouts", "notes", "json_schema", "context_window", "tools"),
    }
)
TYPES = frozenset({"openai", "mlx", "ollama", "omlx", "sushi"})
LOCAL_PROFILE = {"type": "openai", "endpoint": LOCAL_ENDPOINT}
ENDPOINT_TIMEOUT = 3.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    level: str  # "ok", "problem" or "info"
    text: str
    fix: str = ""


def ok(text: str) -> Finding:
    return Finding(level="ok", text=text)


def info(text: str) -> Finding:
    return Finding(level="info", text=text)


def problem(text: str, fix: str) -> Finding:
    return Finding(level="problem", text=text, fix=fix)


@dataclass(kw_only=True, slots=True)
class _File:
    kind: str
    path: Path
    data: dict[str, Any] | None = None
    raw: bytes = b""


def config_files(home: Path, cwd: Path) -> list[_File]:
    return [
        _File(kind="global", path=global_config(home)),
        _File(kind="project", path=project_config(cwd)),
        _File(kind="legacy", path=legacy_config(home)),
    ]


def check_configs(
    home: Path, cwd: Path, env: Mapping[str, str]
) -> tuple[list[Finding], dict[str, Any]]:
    """Findings for each config file, and the merged settings the daemon would use."""
    findings: list[Finding] = []
    merged: dict[str, Any] = {}
    for file in config_files(home, cwd):
        findings.extend(_read(file))
        if file.data is None:
            continue
        if file.kind == "project" and not trust.is_trusted(
            trust.store_path(dict(env)), file.path, file.raw
        ):
            findings.append(info(f"{file.path}: untrusted, so its providers are not checked"))
            continue
        data = dict(file.data)
        if file.kind == "legacy" and isinstance(data.get("provider"), str):
            data.setdefault("default_provider", data.pop("provider"))
        merged = deep_merge(merged, data)
    if not any(file.path.exists() for file in config_files(home, cwd)):
        findings.append(
            info(
                "no config files: the daemon uses a model server or key it finds, else the "
                f"built-in local profile ({global_config(home)})"
            )
        )
    return findings, merged


def _read(file: _File) -> list[Finding]:
    try:
        if file.kind == "project":  # as the daemon reads it: a regular file, never a link
            raw = read_project_file(file.path, limit=None)
            if raw is None:
                return []
            file.raw = raw
        else:
            file.raw = file.path.read_bytes()
    except FileNotFoundError:
        return []
    except ProjectFileRefused as refused:
        return [problem(str(refused), "the daemon does not read it either; see the line above")]
    except OSError as exc:
        return [problem(f"{file.path}: cannot read ({exc.strerror})", "check its permissions")]
    try:
        data = parse_json(file.raw.decode("utf-8"))
    except UnicodeDecodeError:
        return [problem(f"{file.path}: not UTF-8 text", "save it as UTF-8")]
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        return [problem(f"{file.path}: not valid JSON ({exc.msg} at {where})", "correct it there")]
    except ValueError as exc:  # nested too deeply
        return [problem(f"{file.path}: not valid JSON ({exc})", "correct it there")]
    if not isinstance(data, dict):
        return [problem(f"{file.path}: the top level is not an object", 'wrap it in "{...}"')]
    file.data = data
    found = _key_problems(file.path, data, LEGACY_KEYS if file.kind == "legacy" else TOP_KEYS)
    return found or [ok(f"{file.path}: valid")]


def _key_problems(path: Path, data: dict[str, Any], known: frozenset[str]) -> list[Finding]:
    found: list[Finding] = []
    unknown = sorted(set(data) - known)
    if unknown:
        found.append(
            problem(
                f"{path}: unknown key(s) {', '.join(unknown)}",
                f"remove or respell them; known: {', '.join(sorted(known))}",
            )
        )
    providers = data.get("providers", {})
    if not isinstance(providers, dict):
        return [*found, problem(f"{path}: providers is not an object", "map names to profiles")]
    for name, profile in providers.items():
        found.extend(_profile_problems(path, str(name), profile))
    return found


def _profile_problems(path: Path, name: str, profile: Any) -> list[Finding]:
    at = f"{path}: providers.{name}"
    if not isinstance(profile, dict):
        return [problem(f"{at} is not an object", "give it type, endpoint and model")]
    found: list[Finding] = []
    unknown = sorted(set(profile) - PROFILE_KEYS - {"api_key"})
    if unknown:
        found.append(
            problem(f"{at}: unknown key(s) {', '.join(unknown)}", "remove or respell them")
        )
    if "api_key" in profile:
        found.append(
            problem(
                f"{at}.api_key is not read",
                "put the key in an environment variable and name it in api_key_env",
            )
        )
    if str(profile.get("type", "openai")).lower() not in TYPES:
        found.append(problem(f"{at}.type is unknown", f"use one of {', '.join(sorted(TYPES))}"))
    endpoint = profile.get("endpoint")
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        found.append(problem(f"{at}.endpoint is not an http(s) URL", "set the full URL"))
    if not isinstance(profile.get("model"), str) or not profile.get("model"):
        found.append(problem(f"{at}.model is missing", "name the model to ask for"))
    return found


def usable_profiles(merged: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The profiles the daemon could use; the built-in local one when there are none."""
    raw = merged.get("providers")
    profiles = {
        str(name): profile
        for name, profile in (raw.items() if isinstance(raw, dict) else [])
        if isinstance(profile, dict)
        and isinstance(profile.get("endpoint"), str)
        and str(profile["endpoint"]).startswith(("http://", "https://"))
    }
    return profiles or {BUILTIN_PROVIDER: {**LOCAL_PROFILE, "builtin": True}}


def default_provider(merged: Mapping[str, Any], profiles: Mapping[str, Any]) -> str:
    chosen = merged.get("default_provider")
    return chosen if isinstance(chosen, str) and chosen in profiles else sorted(profiles)[0]


def check_keys(
    profiles: Mapping[str, dict[str, Any]], default: str, env: Mapping[str, str]
) -> list[Finding]:
    """A missing key is a problem for the default provider, a note for the others."""
    found: list[Finding] = []
    for name, profile in profiles.items():
        variable = profile.get("api_key_env")
        if not isinstance(variable, str) or not variable or env.get(variable):
            continue
        text = f"provider {name} reads its key from {variable}, which is not set here"
        if name == default:
            fix = f"export {variable}=... in the shell that runs harness"
            found.append(problem(text, fix))
        else:
            found.append(info(f"{text} (needed only with --provider {name})"))
    for variable in SEARCH_KEY_VARIABLES:
        state = "set" if env.get(variable) else "not set"
        found.append(info(f"{variable} is {state} (web search: Brave, Exa, else DuckDuckGo)"))
    return found


def models_url(endpoint: str) -> str:
    suffix = "/chat/completions"
    base = endpoint.rstrip("/")
    return base[: -len(suffix)] + "/models" if base.endswith(suffix) else base


def check_endpoints(
    profiles: Mapping[str, dict[str, Any]],
    env: Mapping[str, str],
    *,
    timeout: float = ENDPOINT_TIMEOUT,
) -> list[Finding]:
    """One GET per provider endpoint; any HTTP answer but 401/403 means reachable."""
    import httpx  # doctor only; never on the one-shot path

    found: list[Finding] = []
    for name, profile in profiles.items():
        endpoint = str(profile["endpoint"])
        url = models_url(endpoint)
        variable = profile.get("api_key_env")
        key = env.get(variable) if isinstance(variable, str) else None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            response = httpx.get(url, headers=headers, timeout=timeout, follow_redirects=False)
        except httpx.HTTPError as exc:
            reason = type(exc).__name__ if not str(exc) else str(exc)
            fix = (
                "start a local OpenAI-compatible server there, or add a provider to "
                "~/.coding_harness.json"
                if profile.get("builtin")
                else f"start the server, or correct providers.{name}.endpoint"
            )
            found.append(problem(f"provider {name}: cannot reach {endpoint} ({reason})", fix))
            continue
        if response.status_code in (401, 403):
            found.append(
                problem(
                    f"provider {name}: {url} refused the key (HTTP {response.status_code})",
                    f"check the key in {variable}" if key else "set api_key_env and the key",
                )
            )
        else:
            found.append(ok(f"provider {name}: {url} answers (HTTP {response.status_code})"))
    return found
