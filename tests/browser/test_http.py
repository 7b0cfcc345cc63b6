"""What the page routes answer over plain HTTP: headers, the QR code, and 404s for people
versus for API clients. Same real server as the browser tests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def fetch(url: str, *, method: str = "GET", headers: dict[str, str] | None = None) -> Answer:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return Answer(
                answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
            )
    except urllib.error.HTTPError as error:
        return Answer(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


def new_room(base_url: str) -> str:
    answer = fetch(f"{base_url}/api/rooms", method="POST")
    assert answer.status == 201
    code: str = json.loads(answer.body)["code"]
    return code


def test_pages_carry_a_content_security_policy_without_inline_code(base_url: str) -> None:
    code = new_room(base_url)
    for path in ("/", f"/r/{code}", f"/r/{code.lower()}", "/static/js/main.js"):
        answer = fetch(base_url + path)
        assert answer.status == 200, path
        policy = answer.headers["content-security-policy"]
        assert "default-src 'self'" in policy
        assert "script-src 'self';" in policy and "unsafe-inline" not in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
    room_page = fetch(f"{base_url}/r/{code.lower()}").body.decode()
    assert f"Table {code}" in room_page  # codes are case-insensitive; the page shows the real one
    assert "<script>" not in room_page and "onclick=" not in room_page


def test_a_forged_host_header_cannot_widen_the_policy(base_url: str) -> None:
    answer = fetch(f"{base_url}/", headers={"Host": "x; script-src *"})
    policy = answer.headers["content-security-policy"]
    assert "script-src *" not in policy and "x;" not in policy


def test_the_qr_code_is_an_svg_of_the_room_link(base_url: str) -> None:
    code = new_room(base_url)
    answer = fetch(f"{base_url}/r/{code}/qr.svg")
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("image/svg+xml")
    assert answer.body.lstrip().startswith(b"<svg")
    assert fetch(f"{base_url}/r/ZZZZZZ/qr.svg").status == 404


def test_people_get_a_404_page_and_api_clients_get_json(base_url: str) -> None:
    page = fetch(f"{base_url}/nowhere", headers={"Accept": "text/html"})
    assert page.status == 404 and b"Page not found" in page.body
    room = fetch(f"{base_url}/r/ZZZZZZ", headers={"Accept": "text/html"})
    assert room.status == 404 and b"No such table" in room.body
    api = fetch(f"{base_url}/api/nowhere", headers={"Accept": "text/html"})
    assert api.status == 404 and api.headers["content-type"].startswith("application/json")
