"""The `mcp_servers` configuration: which MCP servers a folder's sessions may use.

Servers come from three places, later ones replacing earlier ones of the same
name: `mcp_servers` in `~/.coding_harness.json` (scope "user"), the project's
`.mcp.json` (`{"mcpServers": {...}}`, the form other agents read) and
`mcp_servers` in the project's `.local_coding_harness.json` (scope "project").
A project's servers are new programs run on the user's machine, so they count
only once the user has trusted the file with `harness trust` (the loader gates
them; this module only parses).

An entry is a stdio server (`command`, `args`, `env`, `cwd`) or a Streamable
HTTP one (`url`, `headers`, `bearer_token_env`), plus what the daemon does with
it: `approve` ("always", "never", or the tools that need no approval), `start`
("lazy": at the first turn that uses it, or "eager": at daemon start, user
servers only), `idle_seconds` and `call_timeout`. `${VAR}` in `args`, `env`,
`url` and `headers` is replaced by the daemon's environment variable (empty
when unset). A project's entry (scope "project") may not read a variable the
session treats as a secret (a provider's or search key, a name with KEY,
TOKEN, SECRET..., a URL with a password: `security.secrets`), through `${VAR}`
or `bearer_token_env`: a server that needs one belongs in the user's own file.
A bad entry is reported, naming its file and key, and left out.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.profiles import ConfigError, OriginOf, bad
from coding_harness.daemon.security.secrets import collect_secrets

APPROVE_ALWAYS = "always"
APPROVE_NEVER = "never"
START_CHOICES = ("lazy", "eager")
DEFAULT_IDLE_SECONDS = 600.0
DEFAULT_CALL_TIMEOUT = 60.0
# The model sees `mcp__SERVER__TOOL`; providers take names of [a-zA-Z0-9_-], 64 at most.
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KEYS = frozenset(
    {
        "command", "args", "env", "cwd", "url", "headers", "bearer_token_env", "approve",
        "start", "idle_seconds", "call_timeout", "type", "transport", "disabled",
    }
)  # fmt: skip


@dataclass(frozen=True, kw_only=True, slots=True)
class McpServerSpec:
    """One configured server, as the daemon starts and uses it."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    bearer_token_env: str | None = None
    approve: str | tuple[str, ...] = APPROVE_ALWAYS
    start: str = "lazy"
    idle_seconds: float = DEFAULT_IDLE_SECONDS
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    scope: str = "user"
    origin: str = ""

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def identity(self) -> tuple[Any, ...]:
        """What makes two entries the same server: one process or connection serves both."""
        return (
            self.name,
            self.command,
            self.args,
            self.env,
            self.cwd,
            self.url,
            self.headers,
            self.bearer_token_env,
        )

    def needs_approval(self, tool: str) -> bool:
        """Whether a call of the server's tool `tool` is put to the user first."""
        if self.approve == APPROVE_NEVER:
            return False
        if self.approve == APPROVE_ALWAYS:
            return True
        return tool not in self.approve


def parse_servers(
    raw: Any,
    origin_of: OriginOf,
    problems: list[str],
    *,
    key: tuple[str, ...] = ("mcp_servers",),
    scope: str = "user",
    default_cwd: str | None = None,
    guarded: frozenset[str] = frozenset(),
) -> dict[str, McpServerSpec]:
    """The servers of one `mcp_servers` (or `mcpServers`) object; bad entries reported.
    Outside the user's own file (`scope` other than "user"), `${VAR}` and
    `bearer_token_env` may not name a variable of `guarded` (the keys the harness
    keeps) nor any other the session treats as a secret: a project's server must not
    be handed the user's model key, nor their GITHUB_TOKEN."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        problems.append(f"{bad(origin_of, key, 'must be an object')}; it was ignored")
        return {}
    servers: dict[str, McpServerSpec] = {}
    for name, entry in raw.items():
        try:
            spec = parse_server(
                str(name), entry, origin_of, key, scope, default_cwd, problems, guarded
            )
        except ConfigError as exc:
            problems.append(f"{exc}; this MCP server was left out")
            continue
        if spec is not None:
            servers[spec.name] = spec
    return servers


def parse_server(
    name: str,
    entry: Any,
    origin_of: OriginOf,
    key: tuple[str, ...],
    scope: str,
    default_cwd: str | None,
    problems: list[str],
    guarded: frozenset[str] = frozenset(),
) -> McpServerSpec | None:
    """One entry; None when it says `"disabled": true`. A key it does not know (other
    agents' files carry `autoApprove`, `timeout`, ...) is reported and ignored."""
    path = (*key, name)
    if not SERVER_NAME.fullmatch(name):
        raise bad(origin_of, path, "is not a usable name (letters, digits, _ and -, 1-32)")
    if not isinstance(entry, Mapping):
        raise bad(origin_of, path, "must be an object")
    for unknown in sorted(str(k) for k in entry if k not in _KEYS):
        error = bad(origin_of, (*path, unknown), "is not a setting of an MCP server")
        problems.append(f"{error}; it was ignored")
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise bad(origin_of, (*path, "disabled"), "must be true or false")
    if disabled:
        return None
    for kind in ("type", "transport"):
        if entry.get(kind) == "sse":
            rule = "uses the old HTTP+SSE transport; give the server's Streamable HTTP address"
            raise bad(origin_of, (*path, kind), rule)
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise bad(origin_of, path, 'needs either "command" (stdio) or "url" (HTTP), not both')
    fields: dict[str, Any] = {"name": name, "scope": scope, "origin": origin_of(path)}
    if command is not None:
        fields.update(_stdio(command, entry, origin_of, path, default_cwd))
    else:
        fields.update(_http(url, entry, origin_of, path))
    fields.update(_policy(entry, origin_of, path))
    _expand_fields(fields, guarded if scope != "user" else None, origin_of, path)
    if url is not None and not re.match(r"https?://[^/\s]+", fields["url"]):
        raise bad(origin_of, (*path, "url"), "must be an http:// or https:// address")
    return McpServerSpec(**fields)


def _expand_fields(
    fields: dict[str, Any],
    guard: frozenset[str] | None,
    origin_of: OriginOf,
    path: tuple[str, ...],
) -> None:
    """`${VAR}` in args, env, url and headers replaced by the daemon's variables; with a
    `guard` (a project's entry: the keys the harness keeps) none that holds a secret."""

    def expand(key: str, text: str) -> str:
        for match in _VARIABLE.finditer(text):
            if guard is not None and secret_variable(match.group(1), guard):
                raise bad(origin_of, (*path, key), _secret_rule(f"${{{match.group(1)}}}"))
        return _VARIABLE.sub(lambda m: os.environ.get(m.group(1), ""), text)

    token = fields.get("bearer_token_env")
    if guard is not None and token is not None and secret_variable(token, guard):
        raise bad(origin_of, (*path, "bearer_token_env"), _secret_rule(f"${token}"))
    if "args" in fields:
        fields["args"] = tuple(expand("args", arg) for arg in fields["args"])
    for key in ("env", "headers"):
        if key in fields:
            fields[key] = tuple((name, expand(key, value)) for name, value in fields[key])
    if fields.get("url") is not None:
        fields["url"] = expand("url", fields["url"])


def secret_variable(name: str, guarded: frozenset[str]) -> bool:
    """Whether the session treats the variable `name` as a secret: one of `guarded`, a
    search key, a secret-looking name, or a value holding a URL's password."""
    value = os.environ.get(name, "")
    return name in collect_secrets(guarded, {name: value}).names


def _secret_rule(variable: str) -> str:
    return (
        f"reads {variable}, a secret the harness keeps from a project's servers; "
        f"to hand it to this server, declare the server in your own ~/.coding_harness.json"
    )


def _stdio(
    command: Any, entry: Mapping[str, Any], origin_of: OriginOf, path: tuple[str, ...], cwd: Any
) -> dict[str, Any]:
    if not isinstance(command, str) or not command.strip():
        raise bad(origin_of, (*path, "command"), "must be a program name or path")
    cwd = entry.get("cwd", cwd)
    if cwd is not None and not (isinstance(cwd, str) and Path(cwd).expanduser().is_absolute()):
        raise bad(origin_of, (*path, "cwd"), "must be an absolute folder")
    return {
        "command": str(Path(command).expanduser()) if command.startswith("~") else command,
        "args": tuple(_strings(entry.get("args"), origin_of, path, "args")),
        "env": _pairs(entry.get("env"), origin_of, path, "env"),
        "cwd": str(Path(cwd).expanduser()) if cwd is not None else None,
    }


def _http(
    url: Any, entry: Mapping[str, Any], origin_of: OriginOf, path: tuple[str, ...]
) -> dict[str, Any]:
    if not isinstance(url, str):
        raise bad(origin_of, (*path, "url"), "must be an http:// or https:// address")
    token_env = entry.get("bearer_token_env")
    if token_env is not None and not (isinstance(token_env, str) and token_env):
        raise bad(origin_of, (*path, "bearer_token_env"), "must name an environment variable")
    return {
        "url": url,
        "headers": _pairs(entry.get("headers"), origin_of, path, "headers"),
        "bearer_token_env": token_env,
    }


def _policy(entry: Mapping[str, Any], origin_of: OriginOf, path: tuple[str, ...]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    approve = entry.get("approve", APPROVE_ALWAYS)
    if isinstance(approve, list):
        fields["approve"] = tuple(_strings(approve, origin_of, path, "approve"))
    elif approve in (APPROVE_ALWAYS, APPROVE_NEVER):
        fields["approve"] = approve
    else:
        rule = 'must be "always", "never" or a list of tool names'
        raise bad(origin_of, (*path, "approve"), rule)
    start = entry.get("start", "lazy")
    if start not in START_CHOICES:
        raise bad(origin_of, (*path, "start"), 'must be "lazy" or "eager"')
    fields["start"] = start
    for name in ("idle_seconds", "call_timeout"):
        value = entry.get(name)
        if value is None:
            continue
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value <= 0:
            raise bad(origin_of, (*path, name), "must be a number of seconds above 0")
        fields[name] = float(value)
    return fields


def _strings(raw: Any, origin_of: OriginOf, path: tuple[str, ...], key: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise bad(origin_of, (*path, key), "must be a list of strings")
    return list(raw)


def _pairs(
    raw: Any, origin_of: OriginOf, path: tuple[str, ...], key: str
) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
        raise bad(origin_of, (*path, key), "must be an object of strings")
    return tuple(sorted((str(k), v) for k, v in raw.items()))
