"""What the command sandbox shows of the user's home folder, and what it never shows.

Inside the sandbox (daemon/tools/shell/sandbox.py) the home folder is empty
except for the toolchain folders below, bound read-only, and the folders the
user's global file adds with `agent.sandbox_home`. `NEVER_SHOWN` is masked on
top of everything, wherever it would show: inside a folder shown here, and in
the workspace. The daemon builds the sandbox from this data and `harness doctor`
lists it, so both live here (standard library only).
"""

from __future__ import annotations

import os

# The config key (in `agent`) that adds folders; only the global file may set it.
CONFIG_KEY = "sandbox_home"

# Folders under the home folder that builds need, shown read-only. Never a file of
# credentials: a folder listed here must hold none (a credential file inside one is
# also in NEVER_SHOWN and masked).
SHOWN_IN_HOME: tuple[str, ...] = (
    ".cargo/bin",  # cargo, rustup's proxies, `cargo install`ed tools
    ".cargo/registry",  # crates downloaded (not ~/.cargo/credentials.toml)
    ".cargo/git",  # git dependencies cargo checked out
    ".rustup",  # Rust toolchains (settings.toml names the default, no token)
    ".npm",  # npm's cache (the token is in ~/.npmrc, never shown)
    ".nvm",  # Node versions nvm installed
    ".bun/bin",  # bun itself
    ".bun/install/cache",  # bun's package cache
    ".cache/pip",  # pip's downloads and built wheels
    ".cache/uv",  # uv's cache
    ".cache/pypoetry",  # poetry's cache and virtualenvs
    ".cache/go-build",  # Go's build cache
    ".cache/yarn",  # yarn's package cache
    "go/pkg",  # Go's module cache
    "go/bin",  # `go install`ed tools
    ".local/bin",  # pip --user, pipx and `uv tool` commands
    ".local/lib",  # pip --user installs
    ".local/share/uv/python",  # Pythons uv installed (not uv's credentials folder)
    ".local/share/uv/tools",  # `uv tool` installs
    ".local/share/pipx",  # pipx's virtualenvs
    ".pyenv",  # Pythons pyenv installed
    ".m2/repository",  # Maven's downloads (not settings.xml, which holds passwords)
    ".gradle/caches",  # Gradle's downloads (not gradle.properties, which holds tokens)
    ".gradle/wrapper",  # Gradle distributions
    ".sdkman/candidates",  # JDKs and tools SDKMAN installed
)

# Under the home folder: keys, tokens, histories and the user's settings. Hidden
# wherever they would show, even inside a folder the user added.
NEVER_SHOWN: tuple[str, ...] = (
    ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store",
    ".netrc", ".git-credentials", ".pypirc", ".npmrc", ".pgpass", ".vault-token",
    ".config", ".coding_harness.json", ".local/share/keyrings", ".local/state",
    ".local/share/uv/credentials", ".cargo/credentials.toml", ".cargo/credentials",
    ".m2/settings.xml", ".gradle/gradle.properties", ".cache/huggingface",
    ".bash_history", ".zsh_history", ".python_history", ".local/share/fish",
    ".mozilla",
)  # fmt: skip

# Of NEVER_SHOWN, what a repository may hold for its own build (a project's
# `.config/` folder): masked under the home folder only, not in the workspace.
HOME_ONLY: frozenset[str] = frozenset({".config", ".local/state"})


def workspace_masked() -> tuple[str, ...]:
    """The NEVER_SHOWN names masked inside the workspace too, wherever the sandbox's
    walk finds them (a `.ssh` in a repository, the home folder as the workspace)."""
    return tuple(name for name in NEVER_SHOWN if name not in HOME_ONLY)


def entry_path(entry: str, home: str) -> str | None:
    """The absolute path an `agent.sandbox_home` entry names (`~/x` or `/abs`),
    or None for one that names no folder below the home folder's top."""
    if entry.startswith("~/"):
        path = f"{home}/{entry[2:]}"
    elif entry.startswith("/"):
        path = entry
    else:
        return None
    path = os.path.normpath(path)
    home = os.path.normpath(home)
    # The home folder itself, or a folder around it, would show everything.
    if path == home or home.startswith(path.rstrip("/") + "/"):
        return None
    return path
