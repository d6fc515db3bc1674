"""Where a folder's MCP servers come from, and which of them count.

`configured_servers` puts the three sources in order, each replacing servers of
the same name from the one before: `mcp_servers` of `~/.coding_harness.json`,
the project's `.mcp.json`, `mcp_servers` of the project's
`.local_coding_harness.json`. The project's two files count only once trusted
as they are now (`harness trust` records each file's digest); until then the
loader has already held back the harness file's `mcp_servers`, and
`.mcp.json` is not even parsed, only named in a problem that says how to trust it.
Like the harness file, `.mcp.json` is read only as a regular file in the workspace:
a symbolic link (to a `.mcp.json` trusted elsewhere, say) is refused, never read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from coding_harness.daemon.config.layers import Layer
from coding_harness.daemon.config.mcp_settings import McpServerSpec, parse_servers
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import MCP_CONFIG_NAME, PROJECT_CONFIG_NAME, parse_json
from coding_harness.protocol.project_files import ProjectFileRefused, read_project_file


def configured_servers(
    layers: Iterable[Layer],
    *,
    home: Path,
    cwd: Path,
    trust_store: Path | None,
    problems: list[str],
    guarded: frozenset[str] = frozenset(),
) -> dict[str, McpServerSpec]:
    """The servers sessions in `cwd` may use, by name; a project's may not read the
    variables of `guarded` through `${VAR}`. Each file's entries are read on
    their own: a server named again in a later file is replaced whole, never merged
    key by key with the earlier entry (a `url` must not meet a `command`)."""
    project_file = str(cwd / PROJECT_CONFIG_NAME)
    user: dict[str, McpServerSpec] = {}
    project: dict[str, McpServerSpec] = {}
    for layer in layers:
        raw = layer.data.get("mcp_servers")
        if raw is None:
            continue
        ours = layer.origin == project_file

        def origin_of(key: tuple[str, ...], origin: str = layer.origin) -> str:
            return origin

        scope, folder = ("project", cwd) if ours else ("user", home)
        parsed = parse_servers(
            raw, origin_of, problems, scope=scope, default_cwd=str(folder), guarded=guarded
        )
        (project if ours else user).update(parsed)
    path = cwd / MCP_CONFIG_NAME
    shared = read_mcp_json(path, trust_store, problems, guarded)
    return {**user, **shared, **project}


def read_mcp_json(
    path: Path, trust_store: Path | None, problems: list[str], guarded: frozenset[str] = frozenset()
) -> dict[str, McpServerSpec]:
    """The servers of a project's `.mcp.json`; none (and a problem naming `harness trust`)
    while the file is not trusted as it is now. The bytes whose trust is checked are the
    bytes parsed: the file is read once."""
    try:
        raw = read_project_file(path, limit=None)
    except ProjectFileRefused as exc:
        problems.append(str(exc))
        return {}
    except OSError as exc:
        problems.append(f"{path}: cannot read ({exc.strerror}); it was ignored")
        return {}
    if raw is None:
        return {}
    if trust_store is None or not trust.is_trusted(trust_store, path, raw):
        problems.append(
            f"{path}: its MCP servers are programs this repository would run on your "
            f"machine; none starts until you review the file and run `harness trust` in "
            f"{path.parent}"
        )
        return {}
    try:
        data = parse_json(raw.decode("utf-8"))
    except ValueError as exc:
        problems.append(f"{path}: not valid JSON ({exc}); it was ignored")
        return {}
    if not isinstance(data, Mapping):
        problems.append(f"{path}: the top level must be a JSON object; it was ignored")
        return {}

    def origin_of(key: tuple[str, ...]) -> str:
        return str(path)

    return parse_servers(
        data.get("mcpServers"),
        origin_of,
        problems,
        key=("mcpServers",),
        scope="project",
        default_cwd=str(path.parent),
        guarded=guarded,
    )
