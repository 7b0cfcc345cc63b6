"""When things go wrong at the table: the network drops (the table greys and says so, and
the page rejoins the moment the browser is back online), the same seat is opened in a
second tab (the first says so and stays away), and keys after a click on one of the top
bar's switches (Enter flips, not the switch)."""

from __future__ import annotations

import re

from browser_table import DESKTOP, WAIT_MS, Person
from crowd import Guest, open_room
from playwright.async_api import Browser, expect

NO_RETRY_MS = 2_000  # static/js/socket.js: no first try comes later than 1.5 s
# Counts the connections the page opens: a reconnection attempt is a new one, a WebSocket
# or a long-polling handshake (a polling request without a session id yet).
COUNT_SOCKETS = """(() => {
  const Original = window.WebSocket;
  window.openedSockets = 0;
  window.WebSocket = class extends Original {
    constructor(...args) { super(...args); window.openedSockets += 1; }
  };
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    if (/transport=polling/.test(url) && !/[?&]sid=/.test(url)) window.openedSockets += 1;
    return open.call(this, method, url, ...rest);
  };
})();"""


async def test_offline_greys_the_table_and_online_rejoins_at_once(
    base_url: str, browser: Browser
) -> None:
    code = await open_room(base_url)
    person = await Person.open(browser, "desktop", DESKTOP)
    page = person.page
    await page.add_init_script(COUNT_SOCKETS)
    await person.join(f"{base_url}/r/{code}", "Ann")
    await expect(page.locator("#offline")).to_be_hidden()

    await person.context.set_offline(True)
    await expect(page.locator("#offline")).to_be_visible(timeout=WAIT_MS)
    await expect(page.locator("#offline")).to_have_text("Connection lost, reconnecting...")
    await expect(page.locator("body")).to_have_class(re.compile(r"\bis-offline\b"))
    # The browser saying it is online again starts a new attempt there and then, not after
    # the back-off timer.
    opened = await page.evaluate(
        """() => { const before = window.openedSockets;
                   window.dispatchEvent(new Event('online'));
                   return window.openedSockets - before; }"""
    )
    assert opened == 1
    await person.context.set_offline(False)
    await expect(page.locator("#conn")).to_have_attribute(
        "data-status", "connected", timeout=WAIT_MS
    )
    await expect(page.locator("#offline")).to_be_hidden()
    await expect(page.locator("#lobby-status")).not_to_be_empty()
    assert person.problems == [] or all("ERR_INTERNET_DISCONNECTED" in p for p in person.problems)


async def test_a_second_tab_takes_the_seat_and_the_first_stays_away(
    base_url: str, browser: Browser
) -> None:
    """The server closes the older tab's connection (a server-initiated disconnect, which
    Socket.IO never retries): that tab says why and does not come back. Were it to retry,
    it would take the seat back and the two tabs would close each other for ever."""
    code = await open_room(base_url)
    first = await Person.open(browser, "desktop", DESKTOP)
    await first.page.add_init_script(COUNT_SOCKETS)
    await first.join(f"{base_url}/r/{code}", "Ann")
    await first.seated()
    second = await first.context.new_page()  # the same browser: the same name and token
    await second.add_init_script(COUNT_SOCKETS)
    await second.goto(f"{base_url}/r/{code}")

    await expect(first.page.locator("#fatal")).to_be_visible(timeout=WAIT_MS)
    await expect(first.page.locator("#fatal-title")).to_have_text("Disconnected")
    await expect(first.page.locator("#conn")).to_have_attribute("data-status", "disconnected")
    await expect(second.locator("#conn")).to_have_attribute(
        "data-status", "connected", timeout=WAIT_MS
    )
    await expect(second.locator(".seat--you")).to_have_count(1, timeout=WAIT_MS)
    # Longer than the page's first wait before a try, on any of its ways of trying again
    # (Socket.IO's 400 ms with jitter, a restart's 300 ms, a refusal's 1 s with jitter):
    # nobody came back for the seat.
    await second.wait_for_timeout(NO_RETRY_MS)
    assert await first.page.evaluate("window.openedSockets") == 1
    assert await second.evaluate("window.openedSockets") == 1
    await expect(second.locator("#conn")).to_have_attribute("data-status", "connected")
    await expect(second.locator(".seat--you")).to_have_count(1)
    await expect(first.page.locator("#fatal")).to_be_visible()
    assert first.problems == []


async def test_enter_flips_after_a_click_on_the_sound_switch(
    base_url: str, browser: Browser
) -> None:
    code = await open_room(base_url)
    person = await Person.open(browser, "desktop", DESKTOP, flip_key="Enter")
    page = person.page
    await person.join(f"{base_url}/r/{code}", "Ann")
    await person.seated()
    guest = await Guest(base_url, code, "Bob").connect()
    try:
        await guest.sit()
        await expect(page.locator("#start")).to_be_visible(timeout=WAIT_MS)
        await page.click("#start")
        await person.wait_phase("playing")
        if not (await person.table())["myTurn"]:
            await guest.call("flip")
        await expect(page.locator("body")).to_have_attribute("data-turn", "mine", timeout=WAIT_MS)
        await page.click("#sound-toggle")
        await expect(page.locator("#sound-toggle")).to_have_attribute("aria-pressed", "false")
        await person.flip()  # Enter: waits for the card to leave the deck
        await expect(page.locator("#sound-toggle")).to_have_attribute("aria-pressed", "false")
        # Flips are not announced one by one; two sentences in one moment are both said.
        await expect(page.locator("#announcer")).not_to_contain_text("flipped")
        await page.evaluate(
            """() => import('/static/js/widgets.js').then((widgets) => {
                 widgets.announce('Sam takes 4 cards.'); widgets.announce('Bo is out'); })"""
        )
        await expect(page.locator("#announcer")).to_have_text("Sam takes 4 cards. Bo is out")
        # Space slaps wherever the focus is: here on the (focused) four-colour switch, a
        # keyboard user's, it still slaps rather than pressing the switch.
        await page.focus("#colours-toggle")
        await page.keyboard.press("Space")
        await expect(page.locator("#colours-toggle")).to_have_attribute("aria-pressed", "false")
        await expect(page.locator(".slap-mark, #banner:not(:empty)").first).to_be_attached(
            timeout=WAIT_MS
        )
    finally:
        await guest.close()
    assert person.problems == []
