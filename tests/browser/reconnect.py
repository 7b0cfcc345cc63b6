"""A phone's network dropped and back, in any engine (engines.py): the page at a table on the
LAN address loses the network for a while, and is timed from the network's return to its
connection's (as the page itself saw both: performance.now() when the test restored the
network, and when the top bar's dot said "connected"). Shared by the reconnect test and
bench/reconnect.py."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from crowd import open_room
from engines import EnginePage, lan_url

CONNECTED = "() => document.getElementById('conn').dataset.status === 'connected'"
DROPPED = "() => document.getElementById('conn').dataset.status !== 'connected'"
# When the dot next says "connected" (performance.now()), and the transport the connection
# opened with (the first the page notes from now on: it may upgrade before it connects).
WATCH_RETURN = """() => {
  window.returned = null;
  let opened = '';
  const conn = document.getElementById('conn');
  new MutationObserver((records, observer) => {
    if (records.some((r) => r.attributeName === 'data-transport')) {
      opened ||= conn.dataset.transport || '';
    }
    if (!records.some((r) => r.attributeName === 'data-status')) return;
    if (conn.dataset.status !== 'connected') return;
    window.returned = {at: performance.now(), transport: opened};
    observer.disconnect();
  }).observe(conn, {attributes: true, attributeFilter: ['data-status', 'data-transport']});
  return true;
}"""
RETURNED = "() => window.returned"


@dataclass
class Return:
    engine: str
    seconds: float  # from the network's return to the page's connection
    transport: str  # the transport that brought it back
    # Where the network is a proxy that refuses a request once it has it (WebKit's): a
    # retry's polling request was refused, and its websocket, tried at once after it
    # (Socket.IO's tryAllTransports), was not: the network came back between the two.
    fell_back: bool


async def seated_page(page: EnginePage, base_url: str, name: str) -> None:
    """The page at a table of its own, on the LAN address, connected."""
    code = await open_room(base_url)
    await page.goto(lan_url(f"{base_url}/r/{code}"))
    await page.type("#name-input", name)
    await page.click("#name-form button[type=submit]")
    await page.wait_for("() => document.querySelector('.seat--you') !== null")
    await page.wait_for(CONNECTED)


async def drop_and_return(page: EnginePage, seconds: float) -> Return:
    """Cuts the page's network for `seconds`, restores it and times the way back."""
    await page.cut_network()
    await page.wait_for(DROPPED)
    await asyncio.sleep(seconds)
    await page.evaluate(WATCH_RETURN)
    restored_at = await page.evaluate("() => performance.now()")
    await page.restore_network()
    returned = await page.wait_for(RETURNED)
    refused = page.refused()
    polling = sum("transport=polling" in line for line in refused)
    websocket = sum("transport=websocket" in line for line in refused)
    seconds = (returned["at"] - restored_at) / 1000
    return Return(page.engine, seconds, returned["transport"], polling == websocket + 1)
