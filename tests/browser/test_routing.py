"""The page names its room in every Socket.IO request, so a cluster's router (nginx
`hash $arg_room consistent`, deploy/) can send all of a room's traffic to one process."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from browser_table import DESKTOP, Person
from playwright.async_api import Browser, Request, WebSocket


async def test_every_socket_request_of_a_room_carries_its_code(
    base_url: str, browser: Browser
) -> None:
    person = await Person.open(browser, "desktop", DESKTOP)
    page = person.page
    sockets: list[str] = []
    requests: list[str] = []

    def on_websocket(socket: WebSocket) -> None:
        sockets.append(socket.url)

    def on_request(request: Request) -> None:
        if "/socket.io/" in request.url:
            requests.append(request.url)

    page.on("websocket", on_websocket)
    page.on("request", on_request)
    await page.goto(f"{base_url}/")
    await page.fill("#create-name", "Dee")
    await page.click("#create-button")
    await page.wait_for_url(re.compile(r"/r/[A-Z0-9]{6}$"))
    code = page.url.rsplit("/", 1)[1]
    await person.wait_phase("lobby")
    await page.wait_for_function("() => true")  # the page's own connection is up by now
    urls = sockets + requests
    assert sockets, "the page opened no WebSocket"
    for url in urls:
        assert parse_qs(urlsplit(url).query).get("room") == [code], url
    assert person.problems == []
