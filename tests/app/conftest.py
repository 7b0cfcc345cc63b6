from collections.abc import AsyncIterator

import pytest
from app_harness import Server, serving


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    async with serving() as running:
        yield running
