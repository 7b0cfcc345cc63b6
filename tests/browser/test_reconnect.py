"""A 40-second network drop in each engine at once (Chromium and Firefox told they are
offline, as a phone that loses its Wi-Fi; WebKit's connections reset and refused by the LAN
proxy, with no word from the browser): each page comes back by itself once the network
returns, by long-polling first (websockets may be held back after failures: Firefox waits
seconds before a new one), then upgrades to a websocket. A retry whose polling request was
refused just before the network returned tries its websocket at once, and may come back by
it. How soon: bench/reconnect.py."""

from __future__ import annotations

import asyncio

import pytest
from engines import ENGINES, OpenPage
from reconnect import drop_and_return, seated_page

DROP_SECONDS = 40
UPGRADED = "() => document.getElementById('conn').dataset.transport === 'websocket'"
# What the browsers log of the connections the drop broke and the attempts that failed
# while the network was down (Chromium's net::ERR_INTERNET_DISCONNECTED, Firefox's "can't
# establish a connection to ... /socket.io/"): noise, no script error.
NETWORK_NOISE = ("INTERNET_DISCONNECTED", "/socket.io/")


@pytest.mark.network_drop
# Three browsers started and seated, 40 s offline, and back: a minute on a quiet machine, over
# four beside the browser lane and another `make test` (it runs beside its own lane, so a
# long limit costs no time).
@pytest.mark.timeout(600)
async def test_every_engine_comes_back_after_a_40_second_drop(
    base_url: str, open_page: OpenPage
) -> None:
    pages = [await open_page(engine, 390, 844) for engine in ENGINES]
    for page in pages:
        await seated_page(page, base_url, "Ann")
    returns = await asyncio.gather(*(drop_and_return(page, DROP_SECONDS) for page in pages))
    for page, back in zip(pages, returns, strict=True):
        how = back.transport + (" (its polling refused just before)" if back.fell_back else "")
        print(f"{back.engine}: back {back.seconds:.3f} s after the network, by {how}")
        assert back.transport == "polling" or back.fell_back, back
        await page.wait_for(UPGRADED)
        await page.wait_for("() => document.getElementById('offline').hidden")
        errors = [e for e in await page.errors() if not any(n in e for n in NETWORK_NOISE)]
        assert errors == [], f"{page.engine}: {errors}"
