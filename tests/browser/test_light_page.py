"""The room page on a phone on mobile data: Chrome's own network emulation (150 ms round
trip, 1.6 Mbit/s down, as Lighthouse's slow 4G) through the DevTools Protocol. The page's
requests and bytes until it settles are asserted; the time to its first control (the name
field a newcomer types into) is printed, a figure to read, not a timed assertion. And the
caching that makes a second visit and a deploy safe: assets named by their content are
kept for a year, pages are asked for again every time."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from crowd import open_room
from playwright.async_api import Browser

RTT_MS = 150
DOWN_BYTES_PER_S = 1_600_000 / 8
UP_BYTES_PER_S = 750_000 / 8
MAX_REQUESTS = 12
MAX_BYTES = 120_000
FIRST_CONTROL = """() => {
  const input = document.getElementById('name-input');
  return input && input.getClientRects().length > 0 && performance.now();
}"""
IMMUTABLE = "public, max-age=31536000, immutable"


async def load_on_a_slow_network(browser: Browser, url: str) -> dict[str, Any]:
    """Opens `url` in a fresh phone under the slow profile: every HTTP request made until
    the page has settled, the bytes they took on the wire, and when its first control
    showed (ms from navigation)."""
    context = await browser.new_context(
        viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
    )
    page = await context.new_page()
    cdp = await context.new_cdp_session(page)
    await cdp.send("Network.enable")
    await cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    await cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": RTT_MS,
            "downloadThroughput": DOWN_BYTES_PER_S,
            "uploadThroughput": UP_BYTES_PER_S,
        },
    )
    sent: dict[str, str] = {}
    wire: dict[str, float] = {}
    cdp.on(
        "Network.requestWillBeSent",
        lambda e: sent.setdefault(e["requestId"], e["request"]["url"]),
    )
    cdp.on(
        "Network.loadingFinished",
        lambda e: wire.__setitem__(e["requestId"], e["encodedDataLength"]),
    )
    try:
        await page.goto(url, wait_until="commit")
        first = await page.wait_for_function(FIRST_CONTROL, timeout=60_000, polling=10)
        shown_ms = float(await first.json_value())
        await page.wait_for_load_state("load")
        await asyncio.sleep(2)  # late requests (the socket's, the QR code) come in
        urls = [u for u in sent.values() if u.startswith("http")]
        return {"requests": urls, "bytes": sum(wire.values()), "first_control_ms": shown_ms}
    finally:
        await context.close()


async def test_the_room_page_is_light_on_a_slow_phone_network(
    base_url: str, browser: Browser
) -> None:
    code = await open_room(base_url)
    load = await load_on_a_slow_network(browser, f"{base_url}/r/{code}")
    requests, size, shown = load["requests"], load["bytes"], load["first_control_ms"]
    print(
        f"\nroom page at {RTT_MS} ms / 1.6 Mbit/s: {len(requests)} requests, "
        f"{size / 1000:.1f} kB, first control after {shown:.0f} ms"
    )
    assert len(requests) <= MAX_REQUESTS, "\n".join(requests)
    assert size <= MAX_BYTES, size


async def test_hashed_assets_are_kept_for_a_year_and_pages_asked_for_again(
    base_url: str,
) -> None:
    code = await open_room(base_url)
    async with httpx.AsyncClient(base_url=base_url) as http:
        page = await http.get(f"/r/{code}")
        assert page.headers["cache-control"] == "no-cache"
        assert (await http.get("/")).headers["cache-control"] == "no-cache"
        assets = [
            line.split('"')[1]
            for line in page.text.split()
            if line.startswith(('href="/assets/', 'src="/assets/'))
        ]
        assert {asset.rsplit(".", 1)[1] for asset in assets} == {"css", "js"}, assets
        for asset in assets:
            answer = await http.get(asset)
            assert answer.status_code == 200, asset
            assert answer.headers["cache-control"] == IMMUTABLE, asset
        # A name that is not a built asset is not found (and not cached for a year).
        missing = await http.get("/assets/main-NOSUCHHASH.js")
        assert missing.status_code == 404
        assert missing.headers.get("cache-control") != IMMUTABLE
