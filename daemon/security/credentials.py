"""API keys from credential files instead of the service's environment.

systemd's `LoadCredential=NAME:/path/to/file` (or `SetCredentialEncrypted=`)
puts the key in `$CREDENTIALS_DIRECTORY/NAME`, a folder only the service can
read, and not in the unit's `Environment=`, which `systemctl show` prints.
At start-up the daemon reads each file there whose name is a variable name
into its own environment, where the key lookup (the submitting client's
variables first, then the daemon's) finds it. Tool commands never see it:
their environment is an allow-list and every key variable is removed by name.

A variable already set in the daemon's environment is kept (and a warning
logged). Under a service manager without credentials (launchd), point
`CREDENTIALS_DIRECTORY` at a folder of your own, private to you (mode 700,
files 600): a file any user may open is skipped. Values are never logged.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import MutableMapping
from pathlib import Path

log = logging.getLogger(__name__)

FOLDER_VARIABLE = "CREDENTIALS_DIRECTORY"
MAX_CREDENTIAL_BYTES = 65536
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def load_credentials(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Set a variable for each credential file; returns the names that were set."""
    env = os.environ if environ is None else environ
    folder = env.get(FOLDER_VARIABLE)
    if not folder:
        return []
    try:
        files = sorted(Path(folder).iterdir())
    except OSError as exc:
        log.warning("cannot read credentials from %s: %s", folder, exc)
        return []
    loaded = []
    for path in files:
        name = path.name
        if not _VARIABLE_NAME.fullmatch(name):
            continue
        if name in env:
            log.warning("credential %s not used: the variable is set in the environment", name)
            continue
        value = _read_private(path)
        if value:
            env[name] = value
            loaded.append(name)
    if loaded:
        log.info("API keys read from %s: %s", folder, ", ".join(loaded))
    return loaded


def _read_private(path: Path) -> str | None:
    """The file's text without surrounding blanks; None (with a warning) if unusable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        log.warning("credential %s not read: %s", path.name, exc.strerror or exc)
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            log.warning("credential %s not read: not a regular file", path.name)
            return None
        if info.st_mode & 0o007:  # group bits may be systemd's ACL mask
            log.warning(
                "credential %s not read: any user may open it; chmod 600 %s", path.name, path
            )
            return None
        raw = handle.read(MAX_CREDENTIAL_BYTES + 1)
    if len(raw) > MAX_CREDENTIAL_BYTES:
        log.warning("credential %s not read: over %d bytes", path.name, MAX_CREDENTIAL_BYTES)
        return None
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        log.warning("credential %s not read: not UTF-8 text", path.name)
        return None
