"""The real-server suite's builds are portable, and a build with other flags is never run.

A llama.cpp built with `-march=native` died on these VMs (SIGILL, SIGSEGV: they
list AVX-512 extensions they do not run). `make test-servers` builds with
`GGML_NATIVE=OFF` and AVX2, records the flags beside the build, builds again a
cached build whose record is missing or different, and the suite does not
start such a build (its tests skip, naming the rebuild). Nothing is compiled
here: these drive the decisions on folders laid out as the cache is.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.servers import build_flags, real_servers, setup_servers

# /proc/cpuinfo's flags on the VM where the native build crashed (AMD EPYC).
CPUINFO = """processor	: 0
flags		: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c bmi1 bmi2 avx512f avx512dq \
avx512cd avx512bw avx512vl avx512ifma avx512vbmi avx512_vbmi2 avx512_vnni avx512_bf16
"""


THIS_VM = {"avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512vl", "avx512_vbmi2"}


def test_a_cpu_that_lists_avx512_gets_a_portable_avx2_build(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(CPUINFO)
    flags = build_flags.cpu_flags(cpuinfo)
    assert {"avx2", "avx512f", "avx512_bf16"} <= flags
    args = build_flags.choose(flags, "x86_64").cmake_args.split()
    assert "-DGGML_NATIVE=OFF" in args
    assert "-DGGML_AVX2=ON" in args and "-DGGML_FMA=ON" in args and "-DGGML_F16C=ON" in args
    assert "-DGGML_AVX512=OFF" in args
    assert not any(arg.startswith("-DGGML_AVX512") and arg.endswith("=ON") for arg in args)


def test_a_cpu_without_avx2_gets_the_baseline() -> None:
    args = build_flags.choose({"sse4_2", "avx"}, "x86_64").cmake_args.split()
    assert "-DGGML_NATIVE=OFF" in args and "-DGGML_AVX2=OFF" in args


def _venv(at: Path) -> Path:
    """A venv folder whose python runs (the real one), as a finished build leaves it."""
    (at / "bin").mkdir(parents=True)
    (at / "bin" / "python").symlink_to(sys.executable)
    (at / "lib" / "python3" / "site-packages" / "llama_cpp" / "server").mkdir(parents=True)
    return at


def test_a_cached_build_with_unknown_or_other_flags_is_built_again(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    wanted = build_flags.choose(THIS_VM, "x86_64")
    unknown = setup_servers.build_reason(venv, "pass", wanted)
    assert unknown is not None and "build-flags.json" in unknown
    build_flags.record(venv, build_flags.BuildFlags(cmake_args="", machine="x86_64"))
    other = setup_servers.build_reason(venv, "pass", wanted)
    assert other is not None and "not these flags" in other
    build_flags.record(venv, wanted)
    assert setup_servers.build_reason(venv, "pass", wanted) is None
    assert setup_servers.build_reason(venv, "raise SystemExit(1)", wanted) is not None


def test_the_suite_does_not_start_a_build_made_with_other_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODING_HARNESS_TEST_SERVERS", str(tmp_path))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / setup_servers.MODEL_FILE).write_bytes(b"GGUF")
    venv = _venv(tmp_path / setup_servers.LCP_VENV)

    assert real_servers.find_server(real_servers.LLAMA_CPP_PYTHON) is None
    why = real_servers.why_missing(real_servers.LLAMA_CPP_PYTHON)
    assert "build-flags.json" in why and "make test-servers" in why

    build_flags.record(venv, build_flags.wanted())
    kind = real_servers.find_server(real_servers.LLAMA_CPP_PYTHON)
    assert kind is not None and kind.name == real_servers.LLAMA_CPP_PYTHON
