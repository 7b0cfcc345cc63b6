"""The host's door in the lobby, in a browser: the host removes a stranger for good (her
page says so, and she is gone from every seat), locks the table (a newcomer with the plain
link is told it is locked, everyone sees the notice) and shares a fresh invite link that
lets a friend in anyway. A picked emoji is drawn inside its avatar's circle."""

from __future__ import annotations

from browser_table import DESKTOP, PHONE, WAIT_MS, Person
from crowd import open_room
from playwright.async_api import Browser, expect

# Where each seat's emoji is drawn against its circle, and whether the emoji's box clips.
EMOJI_BOXES = """() => [...document.querySelectorAll('.seat-avatar--emoji')].map((circle) => {
  const face = circle.querySelector('.avatar-emoji');
  const outer = circle.getBoundingClientRect();
  const inner = face.getBoundingClientRect();
  return {
    clips: getComputedStyle(face).overflow === 'hidden',
    inside: inner.left >= outer.left - 0.5 && inner.right <= outer.right + 0.5,
  };
})"""


async def test_the_host_removes_a_stranger_locks_the_table_and_invites_a_friend(
    browser: Browser, base_url: str
) -> None:
    code = await open_room(base_url)
    url = f"{base_url}/r/{code}"
    host = await Person.open(browser, "host", PHONE)
    # The fox picked on the home page earlier (storage.js keeps it as JSON).
    await host.context.add_init_script(
        "localStorage.setItem('slapjack.avatar', JSON.stringify('\U0001f98a'))"
    )
    stranger = await Person.open(browser, "stranger", DESKTOP)
    await host.join(url, "Ann")
    await stranger.join(url, "Eve")

    # Locked: a newcomer with the plain link is told so; everyone sees the notice.
    await host.press("#lock")
    await expect(host.page.locator("#locked-note")).to_be_visible(timeout=WAIT_MS)
    await expect(host.page.locator("#lock")).to_have_attribute("aria-pressed", "true")
    await expect(stranger.page.locator("#locked-note")).to_have_text(
        "The host locked this table: nobody new can join.", timeout=WAIT_MS
    )
    newcomer = await Person.open(browser, "newcomer", DESKTOP)
    await newcomer.page.goto(url)
    await newcomer.page.fill("#name-input", "Cy")
    await newcomer.press("#name-form button[type=submit]")
    await expect(newcomer.page.locator("#fatal-title")).to_have_text(
        "This table is locked", timeout=WAIT_MS
    )

    # The host sees everyone else, each with Remove; the stranger does not see the door.
    people = host.page.locator("#door-people")
    await expect(people).to_contain_text("Eve", timeout=WAIT_MS)
    await expect(stranger.page.locator("#door")).to_be_hidden()
    await host.press("#door-people [data-kick]")
    await expect(stranger.page.locator("#fatal")).to_be_visible(timeout=WAIT_MS)
    await expect(stranger.page.locator("#fatal-message")).to_contain_text("removed you")
    await expect(host.page.locator(".seat")).not_to_contain_text(["Eve"], timeout=WAIT_MS)
    await expect(people).not_to_contain_text("Eve")
    # Coming back is no way in: the same page again, with her token.
    await stranger.page.goto(url)
    await expect(stranger.page.locator("#fatal-title")).to_have_text(
        "You can't join this table", timeout=WAIT_MS
    )

    # A fresh invite link lets a friend in (from the stranger's address too: all of these
    # pages are 127.0.0.1, as a household behind one address is).
    await host.press("#invite")
    invite = host.page.locator("#invite-url")
    await expect(invite).to_be_visible(timeout=WAIT_MS)
    link = await invite.input_value()
    assert link.startswith(f"{url}?invite="), link
    friend = await Person.open(browser, "friend", DESKTOP)
    await friend.join(link, "Dot")
    await expect(host.page.locator("#door-people")).to_contain_text("Dot", timeout=WAIT_MS)

    # The host's fox, inside its circle, in a box that clips it.
    boxes = await host.page.evaluate(EMOJI_BOXES)
    assert boxes and all(box["clips"] and box["inside"] for box in boxes), boxes
    for person in (host, stranger, newcomer, friend):
        assert not person.problems, (person.label, person.problems)
