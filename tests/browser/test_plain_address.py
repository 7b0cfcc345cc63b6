"""The LAN address a party plays on (http://party.test:PORT, no secure context: no Wake Lock,
no share sheet, no async clipboard), in each engine: Copy truly puts the link on the
clipboard (read back by pasting it), or says it could not and shows the link selected; the
screen is kept on during a game by the silent video; the host is told once what the address
cannot do. On a secure address a refused wake lock is asked for again only when the page is
shown again, not on every new state."""

from __future__ import annotations

import asyncio

import pytest
from browser_table import WAIT_MS, Person
from crowd import Guest, open_room
from engines import EnginePage, OpenPage, lan_url
from playwright.async_api import Browser, expect

NOTE_SHOWN = "() => !document.getElementById('plain-address').hidden"
LOBBY_READY = "() => document.getElementById('lobby-status').textContent !== ''"
# A field of the test's own, where the clipboard is pasted to be read.
PASTE_FIELD = """() => { const field = document.createElement('textarea');
  field.id = 'pasted'; document.body.append(field); field.focus(); return true; }"""
# What the copy button said, and the link field: shown (a box on the screen) and selected.
COPY_RESULT = """() => { const input = document.getElementById('share-url');
  const r = input.getBoundingClientRect();
  return {said: document.getElementById('share-done').textContent,
          shown: r.width > 40 && r.height > 10 && getComputedStyle(input).opacity === '1',
          selected: document.activeElement === input
            && input.selectionEnd - input.selectionStart === input.value.length}; }"""
# What keeps the screen on: "video" while the silent video plays (its `playing` event).
AWAKE = "() => document.body.dataset.awake === 'video'"


async def join_as_host(page: EnginePage, link: str) -> None:
    await page.goto(link)
    await page.type("#name-input", "Ann")
    await page.click("#name-form button[type=submit]")
    await page.wait_for("() => document.querySelector('.seat--you') !== null")


@pytest.mark.engines
@pytest.mark.timeout(180)
async def test_copy_keep_awake_and_the_hosts_note_on_the_lan_address(
    base_url: str, open_page: OpenPage, engine: str
) -> None:
    page = await open_page(engine, 390, 844)
    link = lan_url(f"{base_url}/r/{await open_room(base_url)}")
    await join_as_host(page, link)
    assert await page.evaluate("() => window.isSecureContext") is False

    # The host is told once: the note, until Got it; not again on this device.
    await page.wait_for(NOTE_SHOWN)
    await page.click("#plain-address-ok")
    assert not await page.evaluate(NOTE_SHOWN)
    await page.goto(link)
    await page.wait_for(LOBBY_READY)
    await page.wait_for("() => document.querySelector('.seat--you') !== null")
    assert not await page.evaluate(NOTE_SHOWN)

    # Copy: the link truly on the clipboard, or honestly not, with the link selected.
    await page.click("#copy-link")
    copied = await page.wait_for(
        f"() => document.getElementById('share-done').textContent && ({COPY_RESULT})()"
    )
    print(f"{engine}: Copy said {copied['said']!r}")
    if copied["said"] == "Link copied!":
        await page.evaluate(PASTE_FIELD)
        await page.paste()
        pasted = await page.evaluate("() => document.getElementById('pasted').value")
        assert pasted == link.rstrip("/"), f"{engine}: 'Link copied!' yet pasted {pasted!r}"
    else:
        assert copied == {
            "said": "Select the link and copy it.",
            "shown": True,
            "selected": True,
        }, copied

    # The screen stays on during a game: the silent video plays (no Wake Lock here).
    await page.click("[data-bot=easy]")
    await page.wait_for("() => document.querySelectorAll('.seat-tag--bot').length === 1")
    await page.click("#start")
    await page.wait_for("() => document.body.dataset.phase === 'playing'")
    await page.wait_for(AWAKE)
    assert await page.errors() == []


# A wake lock the browser refuses, counting the page's requests.
REFUSING_LOCK = """
window.lockRequests = 0;
Object.defineProperty(navigator, 'wakeLock', {value: {request: async () => {
  window.lockRequests += 1;
  throw new DOMException('refused', 'NotAllowedError');
}}});
"""


async def test_a_refused_wake_lock_is_asked_for_once_per_showing(
    base_url: str, browser: Browser
) -> None:
    code = await open_room(base_url)
    person = await Person.open(browser, "phone", {"viewport": {"width": 390, "height": 844}})
    page = person.page
    await page.add_init_script(REFUSING_LOCK)
    await person.join(f"{base_url}/r/{code}", "Ann")
    await person.seated()
    guest = await Guest(base_url, code, "Bob").connect()
    try:
        await guest.sit()
        await page.click("#start")
        await person.wait_phase("playing")
        await expect(page.locator("body")).not_to_have_attribute("data-awake", "lock")
        # New states: three flips by whoever's turn it is, every one drawn by the page.
        flips = 0
        async with asyncio.timeout(3 * WAIT_MS / 1000):
            while flips < 3:
                if (await person.table())["myTurn"]:
                    await person.flip()
                    flips += 1
                    continue
                version = guest.state["version"]
                before = await page.text_content("#pile-count")
                if (await guest.call("flip"))["ok"]:
                    flips += 1
                    await expect(page.locator("#pile-count")).not_to_have_text(
                        before or "", timeout=WAIT_MS
                    )
                else:  # a Jack showing, the pile being collected, or the page's turn (the
                    # page had not drawn it yet): a new state, or the page, says when
                    while guest.state["version"] == version:
                        if (await person.table())["myTurn"]:
                            break
                        await asyncio.sleep(0.05)
        assert await page.evaluate("window.lockRequests") == 1
        # Shown again (back from another app): asked once more.
        await page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
        await page.wait_for_function("() => window.lockRequests === 2", timeout=WAIT_MS)
    finally:
        await guest.close()
