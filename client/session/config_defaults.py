"""The config keys `quiet`, `plain` and `debug`: defaults for `-q`, `--plain`, `--debug`.

The client reads them itself, before it reaches the daemon, since `plain`
decides how even "cannot reach the daemon" is printed. The files and their
order are the daemon's (`protocol.config_files`): the global file, the
project's file in the workspace folder (`quiet` and `plain` are allowed there
without `harness trust`; `debug` never is, trusted or not: the debug log is the
user's switch, `protocol.config_files.USER_ONLY_KEYS`; a project file that is a
symbolic link is not read at all), then the legacy file; the last file that
sets a key wins.
A key set to anything but true or false is skipped here (the daemon reports
it as a config problem when the session starts), and so is a file that cannot
be read. The flags only turn these on: a key set to true cannot be undone
from the command line, and `NO_COLOR` turns colors off whatever `plain` says.

The same files give the API key variables (`api_key_env`) the profiles
of the user's own files name (the global and legacy files, never the
project's: a repository must not choose which of the user's variables are
sent) and the web search keys (`key_names`), and with no config file at all
the usual provider key variables first-run discovery looks for, so a new
session gets their values in its first request (`setup.py`), as it
did when the daemon named them first; whatever else the daemon names comes
with the submit.
"""

from __future__ import annotations

from pathlib import Path

from coding_harness.client.args import OneShotOptions
from coding_harness.protocol.config_files import (
    DISCOVERY_KEY_VARIABLES,
    PROJECT_CONFIG_NAME,
    SEARCH_KEY_VARIABLES,
    USER_ONLY_KEYS,
    global_config,
    legacy_config,
    parse_json,
    profile_key_names,
    project_config,
)
from coding_harness.protocol.project_files import ProjectFileRefused, read_project_file

KEYS = ("quiet", "plain", "debug")
# A config file larger than this is not one anybody wrote by hand; the daemon says so.
_READ_LIMIT = 1024 * 1024


def output_defaults(home: Path, cwd: Path) -> dict[str, bool]:
    """The values of `quiet`, `plain` and `debug` the config files set."""
    return _scan(home, cwd)[0]


def key_names(home: Path, cwd: Path) -> list[str]:
    """The key variables the user's own config files name (with none, those discovery
    looks for), and the search keys."""
    return _scan(home, cwd)[1]


def apply_defaults(options: OneShotOptions, home: Path, cwd: Path) -> None:
    """Turn on each of -q, --plain, --debug that the config sets to true."""
    for key, value in output_defaults(home, cwd).items():
        if value:
            setattr(options, key, True)


# The last scan, by (home, cwd): a one-shot asks for the output defaults and then the
# key names, and reads the files once for both.
_last: tuple[tuple[Path, Path], tuple[dict[str, bool], list[str]]] | None = None


def _scan(home: Path, cwd: Path) -> tuple[dict[str, bool], list[str]]:
    global _last
    if _last is not None and _last[0] == (home, cwd):
        return _last[1]
    _last = ((home, cwd), _read_files(home, cwd))
    return _last[1]


def _read_files(home: Path, cwd: Path) -> tuple[dict[str, bool], list[str]]:
    found: dict[str, bool] = {}
    names: dict[str, None] = {}  # ordered, without repeats
    files = ((global_config(home), True), (project_config(cwd), False), (legacy_config(home), True))
    present = False
    for path, users_own in files:
        present = present or path.is_file()
        data = _read(path)
        for key in KEYS:
            if not users_own and (key,) in USER_ONLY_KEYS:
                continue
            value = data.get(key)
            if isinstance(value, bool):
                found[key] = value
        if users_own:
            names.update(dict.fromkeys(profile_key_names(data)))
    if not present:
        names.update(dict.fromkeys(DISCOVERY_KEY_VARIABLES))
    names.update(dict.fromkeys(SEARCH_KEY_VARIABLES))
    return found, list(names)


def _read(path: Path) -> dict[str, object]:
    """One file's object; the project's only as a regular file (`read_project_file`)."""
    try:
        if path.name == PROJECT_CONFIG_NAME:
            raw = read_project_file(path, _READ_LIMIT)
        else:
            with path.open("rb") as file:
                raw = file.read(_READ_LIMIT + 1)
    except (OSError, ProjectFileRefused):
        return {}
    if raw is None or len(raw) > _READ_LIMIT:
        return {}
    try:
        data = parse_json(raw.decode("utf-8"))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
