"""`harness doctor`: what model servers and key variables the daemon finds here.

Asks the running daemon (`provider.discover`, with this shell's key variables it
names) rather than probing from the client; never starts a daemon. Every line is a
note ("info"): what was found is an offer, not a problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coding_harness.client.commands.doctor_config import Finding, info
from coding_harness.client.render.sanitize import one_line
from coding_harness.protocol import errors, methods, paths
from coding_harness.protocol.client import DaemonUnreachable, connect
from coding_harness.protocol.version import __version__

MODELS_SHOWN = 5
DISCOVER_TIMEOUT = 10.0


def check_discovery(
    env: Mapping[str, str], *, configured: bool = False
) -> tuple[list[Finding], str | None]:
    """The findings, and the profile a session without a config file uses (None when
    there is a config file, nothing was found or the daemon could not be asked).
    `configured`: a config file names its own providers, whose endpoints are checked
    apart; that no *other* server answers on the usual ports is then not said."""
    socket_path = paths.socket_path(dict(env))
    try:
        with connect(socket_path, timeout=2.0) as conn:
            hello = conn.initialize("harness-doctor", __version__, approvals=False)
            names = hello.get("key_env") or []
            sent = {name: env[name] for name in names if env.get(name)}
            found = conn.request(methods.PROVIDER_DISCOVER, {"env": sent}, DISCOVER_TIMEOUT)
    except (DaemonUnreachable, errors.RpcError) as exc:
        text = exc.message if isinstance(exc, errors.RpcError) else str(exc)
        return [
            info(f"cannot ask the daemon which model servers and keys are around: {text}")
        ], None
    chosen = found.get("chosen")
    return discovery_findings(found, configured), chosen if isinstance(chosen, str) else None


def _models(models: list[Any]) -> str:
    shown = ", ".join(one_line(str(m), 60) for m in models[:MODELS_SHOWN])
    more = len(models) - MODELS_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def discovery_findings(found: Mapping[str, Any], configured: bool = False) -> list[Finding]:
    """One line per server skipped as another user's, per server and key found, then
    which one a config-less session uses; "nothing found" only without a config."""
    lines = [
        info(
            f"found {one_line(str(s['label']), 40)} at localhost:{s['port']} "
            f"(profile {s['name']}): {_models(list(s.get('models') or []))}"
        )
        for s in found.get("servers") or []
    ]
    lines += [
        info(
            f"found {k['variable']} set "
            f"(profile {k['name']}, model {one_line(str(k['model']), 60)})"
        )
        for k in found.get("keys") or []
    ]
    skipped = [
        info(
            f"skipped {one_line(str(s['label']), 40)} at localhost:{s['port']}: "
            f"{one_line(str(s.get('why') or 'not yours'), 120)}; it is never used "
            f"unless a config file names it"
        )
        for s in found.get("skipped") or []
    ]
    config_file = found.get("config_file", "~/.coding_harness.json")
    if not lines:
        return skipped + ([] if configured else _nothing(found))
    if found.get("chosen"):
        lines.append(
            info(
                f"with no config file, sessions use {found['chosen']}; the REPL offers to "
                f"save it to {config_file}"
            )
        )
    return skipped + lines


def _nothing(found: Mapping[str, Any]) -> list[Finding]:
    tried = ", ".join(f"{t['port']} ({t['label']})" for t in found.get("tried") or [])
    return [
        info(
            f"no model server of yours answers on localhost {tried or '(none tried)'}, "
            f"and no usual key variable is set"
        )
    ]
