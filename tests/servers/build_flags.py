"""Which CPU flags the test servers are compiled with, and the record kept beside each build.

llama.cpp builds for the machine it compiles on by default (`GGML_NATIVE=ON`,
`-march=native`). The VMs here list AVX-512 extensions in /proc/cpuinfo that
they do not run, and such a build died with SIGILL or SIGSEGV at model load or
at the first request. So the build is portable: `GGML_NATIVE=OFF` and an
explicit x86-64 set (AVX2, FMA, F16C, BMI2; AVX-512 off), or the bare baseline
on a CPU without AVX2. The flags go into `build-flags.json` in the venv; a
venv whose record is missing or names other flags is stale and gets rebuilt.
"""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass
from pathlib import Path

RECORD = "build-flags.json"
AVX2_SET = ("avx", "avx2", "fma", "f16c", "bmi2")
PORTABLE_AVX2 = (
    "-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON"
    " -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF"
)
PORTABLE_BASELINE = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_BMI2=OFF"
    " -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class BuildFlags:
    """What a build was compiled with: the CMake arguments, for this machine's architecture."""

    cmake_args: str
    machine: str


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    """The flags the kernel lists for the first CPU (empty where there is no /proc/cpuinfo)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def choose(flags: set[str], machine: str) -> BuildFlags:
    """AVX2 where the CPU lists the whole set, the x86-64 baseline otherwise; never native."""
    if machine not in {"x86_64", "AMD64"}:
        return BuildFlags(cmake_args="-DGGML_NATIVE=OFF", machine=machine)
    if all(flag in flags for flag in AVX2_SET):
        return BuildFlags(cmake_args=PORTABLE_AVX2, machine=machine)
    return BuildFlags(cmake_args=PORTABLE_BASELINE, machine=machine)


def wanted(extra: str = "") -> BuildFlags:
    """This machine's portable flags, then `extra` (a package's own options)."""
    chosen = choose(cpu_flags(), platform.machine())
    args = f"{chosen.cmake_args} {extra}".strip()
    return BuildFlags(cmake_args=args, machine=chosen.machine)


def recorded(venv: Path) -> BuildFlags | None:
    try:
        data = json.loads((venv / RECORD).read_text())
        return BuildFlags(cmake_args=str(data["cmake_args"]), machine=str(data["machine"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def stale_reason(venv: Path, want: BuildFlags) -> str | None:
    """Why the build in `venv` must not be used here, or None when it was built with `want`."""
    found = recorded(venv)
    if found is None:
        return f"{venv} has no {RECORD}: built with unknown (maybe native) flags"
    if found != want:
        return f"{venv} was built with {found.cmake_args!r} ({found.machine}), not these flags"
    return None


def record(venv: Path, flags: BuildFlags) -> None:
    (venv / RECORD).write_text(json.dumps(asdict(flags), indent=1) + "\n")
