"""provider.discover's params are checked before anything is probed."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.methods import discovery_methods as dm
from coding_harness.protocol import errors
from tests.unit.daemon.methods.conftest import Rig, connected


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"cwd": "relative/folder"}, "must be an absolute path"),
        ({"env": {"KEY": 1}}, "env must map variable names to strings"),
    ],
)
def test_provider_discover_refuses_bad_params(
    rig: Rig, params: dict[str, object], message: str
) -> None:
    async def main() -> None:
        async with connected() as conn:
            with pytest.raises(errors.InvalidParams, match=message):
                await dm.provider_discover(rig.parts, conn, **params)

    asyncio.run(main())
