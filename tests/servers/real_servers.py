"""Starting and stopping the real model servers that `setup_servers.py` installed.

Each server runs the tiny model from the cache on a free port of 127.0.0.1,
with its output in a log file the tests may read; `start` returns once
`/v1/models` answers 200, `stop` ends the process (and only it). A server that
is not installed, or was built with other flags than this machine's portable
ones (`build_flags.py`: a native build may crash here), is `None` from
`find_server`, and its tests skip with `why_missing`'s reason.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.servers import build_flags
from tests.servers.setup_servers import BIN_CMAKE_ARGS, BIN_VENV, LCP_VENV, MODEL_FILE, cache_dir

LLAMA_CPP_PYTHON = "llama-cpp-python"
LLAMA_SERVER = "llama-server"


@dataclass(kw_only=True, slots=True)
class ServerKind:
    """How to run one server program: its command line without the context size and port."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)

    def command(self, context: int, port: int) -> list[str]:
        if self.name == LLAMA_CPP_PYTHON:
            extra = ["--n_ctx", str(context), "--host", "127.0.0.1", "--port", str(port)]
        else:
            extra = ["-c", str(context), "--host", "127.0.0.1", "--port", str(port)]
        return [*self.argv, *extra]


@dataclass(kw_only=True, slots=True)
class RunningServer:
    name: str
    context: int
    port: int
    log: Path
    process: subprocess.Popen[bytes]

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


_GENERATE = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
_ANSWERED = '"POST /v1/chat/completions '


def prompt_sizes(log_text: str) -> list[int | None]:
    """From llama-cpp-python's log: for each chat request it answered (refused ones
    too), in order, the tokens of the prompt it was sent: its first evaluation, the
    prefix it reused plus the rest. None where the log does not say (a server's
    first request reuses nothing and logs no such line). Later evaluations of the
    same request are the server's own: with `chatml-function-calling` it writes a
    call's arguments and then asks the model again, on a prompt that grows."""
    sizes: list[int | None] = []
    first: re.Match[str] | None = None
    for line in log_text.splitlines():
        if _ANSWERED in line:
            sizes.append(int(first[1]) + int(first[2]) if first else None)
            first = None
        elif first is None:
            first = _GENERATE.search(line)
    return sizes


def model_path() -> Path | None:
    path = cache_dir() / "models" / MODEL_FILE
    return path if path.is_file() else None


def _stale(name: str) -> str | None:
    """Why the build of `name` in the cache must not run here (None: it may)."""
    if name == LLAMA_CPP_PYTHON:
        return build_flags.stale_reason(cache_dir() / LCP_VENV, build_flags.wanted())
    return build_flags.stale_reason(cache_dir() / BIN_VENV, build_flags.wanted(BIN_CMAKE_ARGS))


def why_missing(name: str) -> str:
    """Why `find_server(name)` gave None, with the command that mends it."""
    build = "LLAMA_SERVER=1 " if name == LLAMA_SERVER else ""
    venv = cache_dir() / (LCP_VENV if name == LLAMA_CPP_PYTHON else BIN_VENV)
    stale = _stale(name)
    if (venv / "bin" / "python").exists() and stale is not None:
        return f"{name}: {stale}; `{build}make test-servers` rebuilds it"
    return f"{name} is not installed: `{build}make test-servers` builds it"


def find_server(name: str) -> ServerKind | None:
    """The installed server `name`, or None when `make test-servers` has not built it
    (or built it with flags other than this machine's portable ones)."""
    model, cache = model_path(), cache_dir()
    if model is None:
        return None
    if _stale(name) is not None:
        return None
    if name == LLAMA_CPP_PYTHON:
        python = cache / LCP_VENV / "bin" / "python"
        if not any((cache / LCP_VENV).glob("lib/python*/site-packages/llama_cpp/server")):
            return None
        argv = [str(python), "-m", "llama_cpp.server", "--model", str(model)]
        return ServerKind(name=name, argv=[*argv, "--chat_format", "chatml-function-calling"])
    binaries = sorted((cache / BIN_VENV).glob("lib/python*/site-packages/**/bin/llama-server"))
    if not binaries:
        return None
    paths = [str(cache / "lib-links"), str(binaries[0].parent)]
    env = {"LD_LIBRARY_PATH": os.pathsep.join(paths)}
    argv = [str(binaries[0]), "-m", str(model), "--jinja", "-t", "2"]
    return ServerKind(name=name, argv=argv, env=env)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", "/v1/models")
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def start(kind: ServerKind, context: int, log_dir: Path, timeout: float = 120) -> RunningServer:
    port = free_port()
    log = log_dir / f"{kind.name}-{context}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            kind.command(context, port),
            env={**os.environ, **kind.env},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = RunningServer(name=kind.name, context=context, port=port, log=log, process=process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if _answers(port):
            return server
        time.sleep(0.2)
    with contextlib.suppress(OSError):
        server.stop()
    tail = "\n".join(server.log_text().splitlines()[-20:])
    raise RuntimeError(f"{kind.name} did not answer on port {port} within {timeout} s:\n{tail}")
