"""A daemon without a hub never imports psycopg: the store's hooks and hub.sessions included."""

from __future__ import annotations

import ast
import subprocess
import sys


def test_the_store_the_methods_and_sessions_list_import_no_psycopg() -> None:
    probe = (
        "import sys\n"
        "import coding_harness.daemon.app, coding_harness.daemon.methods\n"
        "import coding_harness.daemon.methods.hub_methods, coding_harness.daemon.store.db\n"
        "import coding_harness.client.commands.sessions_list\n"
        "import coding_harness.client.commands.sessions_hub\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0].startswith('psycopg')"
        " or m.startswith('coding_harness.daemon.team')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ast.literal_eval(out.stdout.strip()) == []
