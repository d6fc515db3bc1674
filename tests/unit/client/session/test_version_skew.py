"""Version skew between client and daemon, and the lean import path of the client."""

from __future__ import annotations

import io
import subprocess
import sys

from coding_harness.client.render.style import Style
from coding_harness.client.session.version_skew import is_newer, notice, version_numbers, warn


def test_version_numbers_take_the_numeric_release() -> None:
    assert version_numbers("1.2.3") == (1, 2, 3)
    assert version_numbers("0.10.0rc1") == (0, 10, 0)
    assert version_numbers("2.0.dev4") == (2, 0)
    assert version_numbers("unknown") == ()


def test_only_a_strictly_newer_client_counts() -> None:
    assert is_newer("0.2.0", "0.1.9")
    assert is_newer("0.10.0", "0.9.0")
    assert is_newer("1.0.1", "1.0")
    assert not is_newer("0.1.0", "0.1")
    assert not is_newer("0.1.0", "0.2.0")
    assert not is_newer("0.1.0", "")
    assert not is_newer("garbage", "0.1.0")


def test_notice_is_one_line_offering_restart() -> None:
    info = {"daemon": {"name": "harnessd", "version": "0.0.9", "pid": 1}}
    line = notice(info, client_version="0.1.0")
    assert line is not None and "\n" not in line
    assert "0.0.9" in line and "0.1.0" in line and "harness daemon restart" in line
    assert notice({"daemon": {"version": "0.1.0"}}, client_version="0.1.0") is None
    assert notice({}, client_version="0.1.0") is None
    stream = io.StringIO()
    warn({"daemon": {"version": "0.0.1"}}, Style(stream))
    assert stream.getvalue().count("\n") == 1


def test_client_paths_that_run_often_import_no_psutil_or_plistlib() -> None:
    code = (
        "import sys\n"
        "import coding_harness.client.cli, coding_harness.client.commands.oneshot\n"
        "import coding_harness.client.session.setup, coding_harness.client.session.version_skew\n"
        "import coding_harness.client.service.daemon_control\n"
        "heavy = ('psutil', 'plistlib', 'httpx')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
