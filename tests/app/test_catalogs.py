"""The message catalogs (app/locale): complete in Malay, compilable, and what the pages
speak: every word a template shows, in the request's language."""

from __future__ import annotations

import difflib
import io
import re
from datetime import UTC, datetime
from html import unescape
from pathlib import Path

import httpx
import pytest
from app_harness import Server
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

from app.web import i18n
from app.web.pages import DESCRIPTION
from app.wire.protocol import ErrorCode
from tools import catalogs

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"\{\w+\}|%\(\w+\)[sd]")


def extracted() -> Catalog:
    """What `make catalogs` extracts now (babel.cfg), as a catalog template."""
    with (ROOT / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    template = Catalog()
    for filename, lineno, message, comments, context in extract_from_dir(
        str(ROOT), method_map, options_map
    ):
        template.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return template


def po(lang: str) -> Catalog:
    with (i18n.LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as file:
        return read_po(file, locale=lang)


def key(message: object) -> tuple[str | None, str]:
    msgid = message.id  # type: ignore[attr-defined]
    return message.context, msgid[0] if isinstance(msgid, tuple) else msgid  # type: ignore[attr-defined]


@pytest.mark.parametrize("lang", ["ms", "en"])
def test_every_message_has_a_translation_that_is_not_fuzzy(lang: str) -> None:
    template = extracted()
    catalog = po(lang)
    assert len(template) > 200  # the templates' words and messages.js's sentences
    problems = []
    for wanted in template:
        if not wanted.id:
            continue
        found = catalog.get(wanted.id, context=wanted.context)
        strings = found.string if found is not None else None
        if isinstance(strings, str):
            strings = (strings,)
        if found is None:
            problems.append(f"missing: {key(wanted)}")
        elif found.fuzzy:
            problems.append(f"fuzzy: {key(wanted)}")
        elif not strings or not all(strings):
            problems.append(f"untranslated: {key(wanted)}")
    assert problems == [], f"run `make messages`, then translate in {lang}'s .po"


def test_make_messages_on_unchanged_sources_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    """The .po files are in the extracted order with no source locations and nothing
    obsolete: `make messages` after an edit that adds no sentence changes no line of them."""
    template = extracted()
    for message in template:
        message.locations = []
    pot = tmp_path / "messages.pot"
    with pot.open("wb") as file:
        write_po(file, template, width=0)
    for lang in ("en", "ms"):
        target = tmp_path / lang / "LC_MESSAGES"
        target.mkdir(parents=True)
        (target / "messages.po").write_bytes(
            (i18n.LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").read_bytes()
        )
        assert "\n#: " not in (target / "messages.po").read_text()
    monkeypatch.setattr(catalogs, "LOCALE_DIR", tmp_path)
    assert catalogs.update(pot) == []


def test_make_messages_after_a_new_sentence_adds_its_entry_and_changes_no_other_line(
    tmp_path: Path, monkeypatch
) -> None:
    """An extraction made later, with one sentence more: each .po gains that entry, and
    every other line, the header's dates too, stays as it was."""
    template = extracted()
    for message in template:
        message.locations = []
    template.add("A new sentence", context="test.new", auto_comments=["Said once."])
    template.creation_date = datetime(2030, 1, 2, 3, 4, tzinfo=UTC)
    pot = tmp_path / "messages.pot"
    with pot.open("wb") as file:
        write_po(file, template, width=0)
    before = {}
    for lang in ("en", "ms"):
        target = tmp_path / lang / "LC_MESSAGES"
        target.mkdir(parents=True)
        before[lang] = (i18n.LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").read_text()
        (target / "messages.po").write_text(before[lang])
    monkeypatch.setattr(catalogs, "LOCALE_DIR", tmp_path)
    assert catalogs.update(pot) == ["en", "ms"]
    for lang in ("en", "ms"):
        after = (tmp_path / lang / "LC_MESSAGES" / "messages.po").read_text()
        diff = list(difflib.ndiff(before[lang].splitlines(), after.splitlines()))
        assert [line for line in diff if line.startswith("- ")] == [], lang
        added = [line[2:] for line in diff if line.startswith("+ ")]
        english = "A new sentence" if lang == "en" else ""
        assert added == [
            "#. Said once.",
            'msgctxt "test.new"',
            'msgid "A new sentence"',
            f'msgstr "{english}"',
            "",
        ], (lang, added)


@pytest.mark.parametrize("lang", ["ms", "en"])
def test_translations_keep_every_placeholder(lang: str) -> None:
    """A sentence's {name} or %(code)s is filled in by the code: a translation that drops
    or renames one would show a hole (or the raw braces) to a player."""
    catalog = po(lang)  # read once: each message is checked against the whole catalog
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        wanted = set(PLACEHOLDER.findall(ids[-1]))
        for string in strings:
            assert set(PLACEHOLDER.findall(string)) == wanted, (key(message), string)
        assert not list(message.check(catalog)), key(message)


@pytest.mark.parametrize("lang", ["ms", "en"])
def test_the_catalogs_compile(lang: str) -> None:
    compiled = io.BytesIO()
    write_mo(compiled, po(lang))
    compiled.seek(0)
    assert len(read_mo(compiled)) == len([m for m in po(lang) if m.id])


def test_malay_has_one_plural_form_and_the_page_gets_it() -> None:
    assert po("ms").num_plurals == 1
    assert i18n.page_messages("ms")["cards"] == {"other": "{count} kad"}
    assert i18n.page_messages("en")["cards"] == {"one": "{count} card", "other": "{count} cards"}


def test_every_error_code_has_the_pages_own_words() -> None:
    source = (ROOT / "static" / "js" / "messages.js").read_text()
    ids = {key for _, key, _, _ in i18n.js_messages(source)}
    missing = [code.value for code in ErrorCode if f"error.{code.value}" not in ids]
    assert missing == []
    malay = i18n.page_messages("ms")
    assert all(f"error.{code.value}" in malay for code in ErrorCode)


def test_the_language_comes_from_the_switch_then_the_browser() -> None:
    assert i18n.choose(None, "ms-MY,ms;q=0.9,en;q=0.8") == "ms"
    assert i18n.choose(None, "en-GB,en;q=0.9,ms;q=0.8") == "en"
    assert i18n.choose(None, "fr-FR,ms;q=0.5") == "ms"
    assert i18n.choose(None, "ms;q=0, en") == "en"
    assert i18n.choose(None, "fr, de") == "en"
    assert i18n.choose(None, None) == "en"
    assert i18n.choose("en", "ms") == "en"
    assert i18n.choose("xx", "ms") == "ms"


def english_words() -> list[str]:
    """The templates' English sentences whose Malay differs (so seeing one is a miss)."""
    malay = po("ms")
    words = []
    for message in malay:
        plain = message.id and not message.context and isinstance(message.id, str)
        if plain and message.string != message.id and "%(" not in message.id:
            words.append(unescape(message.id))
    return words


def visible_text(html: str) -> str:
    """The page's text and attribute values a person may meet (no JSON data block)."""
    html = re.sub(r'<script type="application/json".*?</script>', "", html, flags=re.S)
    return unescape(html.replace("Slap<span>jack</span>", "Slapjack"))  # the game's name


async def test_every_page_speaks_malay(server: Server) -> None:
    code = await server.new_room()
    english = english_words()
    assert "Start a table" in english and "House rules" in english
    async with httpx.AsyncClient(base_url=server.url, headers={"Accept-Language": "ms"}) as http:
        for path in ["/", f"/r/{code}", "/r/ZZZZZZ", "/no/such/page"]:
            answer = await http.get(path, headers={"Accept": "text/html"})
            html = answer.text
            assert '<html lang="ms">' in html, path
            assert "Accept-Language" in answer.headers["vary"], path
            text = visible_text(html)
            # Words inside tags (>Start a table<) and attribute values ("Invite friends").
            seen = [w for w in english if f">{w}<" in text or f'"{w}"' in text]
            assert seen == [], (path, seen)
            assert 'id="page-messages"' in html and '"lang": "ms"' in html
            assert 'aria-current="true">BM<' in html, path


async def test_the_switch_remembers_the_choice_on_the_device(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.url, headers={"Accept-Language": "ms"}) as http:
        chosen = await http.get("/lang/en", params={"next": "/r/K7PQRX"})
        assert chosen.status_code == 303 and chosen.headers["location"] == "/r/K7PQRX"
        assert "lang=en" in chosen.headers["set-cookie"]
        assert "Max-Age" in chosen.headers["set-cookie"]
        page = await http.get("/")  # the client keeps the cookie, as a browser does
        assert '<html lang="en">' in page.text and ">Start a table<" in page.text
        for elsewhere in ["//evil.example/", "https://evil.example/", "/\\evil.example"]:
            answer = await http.get("/lang/ms", params={"next": elsewhere})
            assert answer.headers["location"] == "/"
        unknown = await http.get("/lang/xx")
        assert "set-cookie" not in unknown.headers


async def test_the_manifest_speaks_the_pages_language(server: Server) -> None:
    """What a phone shows when the page is added to its home screen: the page links the
    manifest in its own language, whose description is the page's meta description."""
    async with httpx.AsyncClient(base_url=server.url) as http:
        for lang in ("en", "ms"):
            page = await http.get("/", headers={"Accept-Language": lang})
            link = re.search(r'<link rel="manifest" href="([^"]+)"', page.text)
            assert link is not None and link.group(1) == f"/manifest.webmanifest?lang={lang}"
            answer = await http.get(unescape(link.group(1)))
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "application/manifest+json"
            manifest = answer.json()
            described = re.search(r'<meta name="description" content="([^"]+)"', page.text)
            assert described is not None
            assert manifest["description"] == unescape(described.group(1))
            assert manifest["lang"] == lang and manifest["start_url"] == "/"
            assert manifest["icons"][0]["src"] == "/static/img/icon.svg"
        malay = (await http.get("/manifest.webmanifest?lang=ms")).json()["description"]
        assert malay == po("ms")[DESCRIPTION].string and malay != DESCRIPTION
        # Without ?lang (or with one we do not speak): the device's choice, then the browser's.
        asked = await http.get("/manifest.webmanifest?lang=xx", headers={"Accept-Language": "ms"})
        assert asked.json()["lang"] == "ms" and "Accept-Language" in asked.headers["vary"]
        http.cookies.set(i18n.COOKIE, "en")  # the switch, on this device: it wins
        chosen = await http.get("/manifest.webmanifest", headers={"Accept-Language": "ms"})
        assert chosen.json()["lang"] == "en"
