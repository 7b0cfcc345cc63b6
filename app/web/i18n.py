"""The page's languages: which one a request gets, its gettext catalog for the templates,
and the same catalog's sentences for the page's scripts (as JSON the template embeds).

The catalogs are app/locale/<lang>/LC_MESSAGES/messages.po, compiled to .mo by
`make catalogs` (pybabel). Templates use English text as the msgid; the scripts' sentences
(static/js/messages.js, the English source) use their id as the msgctxt, so one id is one
catalog entry, with msgid_plural where the sentence counts something.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Any

from babel import Locale
from babel.messages.mofile import read_mo
from babel.support import Translations
from jinja2 import pass_context
from jinja2.runtime import Context

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
DOMAIN = "messages"
DEFAULT = "en"
# Each language's code (for <html lang>, the cookie and the catalogs), its mark on the
# EN | BM switch and its own name for it.
LANGUAGES = {"en": ("EN", "English"), "ms": ("BM", "Bahasa Melayu")}
COOKIE = "lang"
COOKIE_MAX_AGE = 400 * 24 * 3600  # seconds: the longest lifetime browsers keep
# CLDR's plural categories in the order gettext numbers a catalog's plural forms (Babel's
# to_gettext), so msgstr[i] of a language is the i-th of its categories here.
PLURAL_ORDER = ("zero", "one", "two", "few", "many", "other")


class MissingCatalog(RuntimeError):
    """A language's compiled catalog is missing: `make catalogs` has not run."""


@cache
def translations(lang: str) -> Translations:
    mo = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
    if not mo.exists():
        raise MissingCatalog(f"{mo} is missing: run `make catalogs` (pybabel compile)")
    loaded = Translations.load(LOCALE_DIR, [lang], DOMAIN)
    assert isinstance(loaded, Translations)  # not the NullTranslations of a missing file
    return loaded


@cache
def page_messages(lang: str) -> dict[str, Any]:
    """The scripts' sentences in `lang`: id -> text, or id -> {plural category: text}."""
    mo = LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"
    if not mo.exists():
        raise MissingCatalog(f"{mo} is missing: run `make catalogs` (pybabel compile)")
    with mo.open("rb") as file:
        catalog = read_mo(file)
    categories = [tag for tag in PLURAL_ORDER if tag in Locale.parse(lang).plural_form.tags]
    if "other" not in categories:
        categories.append("other")
    sentences: dict[str, Any] = {}
    for message in catalog:
        if not message.context or not message.string:
            continue
        if message.pluralizable:
            forms = list(message.string)
            sentences[message.context] = dict(zip(categories, forms, strict=False))
        else:
            assert isinstance(message.string, str)
            sentences[message.context] = message.string
    return sentences


@cache
def page_messages_json(lang: str) -> str:
    """The JSON for the page's <script type="application/json">: `<` and `&` escaped, so no
    sentence can end the script element."""
    text = json.dumps({"lang": lang, "messages": page_messages(lang)}, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


QUALITY = re.compile(r"^\s*q=([0-9.]+)\s*$")


def from_accept_language(header: str) -> str | None:
    """The first language we have among the header's, by quality ("ms-MY, en;q=0.8")."""
    wanted: list[tuple[float, int, str]] = []
    for index, part in enumerate(header.split(",")):
        tag, _, params = part.partition(";")
        quality = 1.0
        match = QUALITY.match(params) if params else None
        if match:
            try:
                quality = float(match.group(1))
            except ValueError:
                quality = 0.0
        primary = tag.strip().split("-")[0].lower()
        if quality > 0 and primary:
            wanted.append((-quality, index, primary))
    for _, _, primary in sorted(wanted):
        if primary in LANGUAGES:
            return primary
        if primary == "*":
            return DEFAULT
    return None


def choose(cookie: str | None, accept_language: str | None) -> str:
    """The device's own choice (the switch's cookie) first, then the browser's languages."""
    if cookie in LANGUAGES:
        return cookie
    return from_accept_language(accept_language or "") or DEFAULT


@dataclass(frozen=True)
class PageLanguage:
    """What a template needs to speak one language."""

    code: str
    chosen: bool  # the device chose it (the switch), rather than the browser's languages

    @property
    def switch(self) -> list[tuple[str, str, str]]:
        """(code, mark, name) for each language on the switch."""
        return [(code, mark, name) for code, (mark, name) in LANGUAGES.items()]


# The template's gettext reads the request's language from the template context, so one
# shared Jinja environment serves every language (no per-request installation to race).
def _translations_of(context: Context) -> Translations:
    language = context.get("language")
    return translations(language.code if isinstance(language, PageLanguage) else DEFAULT)


@pass_context
def context_gettext(context: Context, message: str) -> str:
    return _translations_of(context).gettext(message)


@pass_context
def context_ngettext(context: Context, singular: str, plural: str, count: int) -> str:
    return _translations_of(context).ngettext(singular, plural, count)


def js_messages(source: str) -> Iterator[tuple[int, str, str | tuple[str, str], str]]:
    """(line, id, English or (singular, plural), comment) for each sentence of messages.js's
    MESSAGES. Ids `x.one` + `x.other` are one counted sentence `x`."""
    body = source[source.index("const MESSAGES = {") : source.index("\n};")]
    entries: dict[str, tuple[int, str, str]] = {}
    comment, in_comment = "", False
    first_line = source[: source.index("const MESSAGES")].count("\n") + 1
    for lineno, line in enumerate(body.splitlines(), start=first_line):
        stripped = line.strip()
        if stripped.startswith("//"):
            # A comment heads the entries under it (for translators); it may span lines.
            text = stripped[2:].strip()
            comment = f"{comment} {text}" if in_comment else text
            in_comment = True
            continue
        in_comment = False
        match = re.match(r'^("(?:[^"\\]|\\.)*")\s*:\s*("(?:[^"\\]|\\.)*"),?$', stripped)
        if match:
            entries[json.loads(match.group(1))] = (lineno, json.loads(match.group(2)), comment)
    for key, (lineno, text, note) in entries.items():
        stem, _, form = key.rpartition(".")
        counted = stem and f"{stem}.one" in entries and f"{stem}.other" in entries
        if counted and form == "one":
            yield lineno, stem, (text, entries[f"{stem}.other"][1]), note
        elif counted and form == "other":
            continue
        else:
            yield lineno, key, text, note


def extract_page_messages(
    fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: Any
) -> Iterator[tuple[int, str, tuple[str, ...], list[str]]]:
    """A Babel extraction method (babel.cfg) for static/js/messages.js: each id becomes the
    msgctxt of its English sentence."""
    source = fileobj.read().decode("utf-8")
    for lineno, key, text, note in js_messages(source):
        comments = [note] if note else []
        if isinstance(text, tuple):
            yield lineno, "npgettext", (key, text[0], text[1]), comments
        else:
            yield lineno, "pgettext", (key, text), comments


def fill(text: str, params: dict[str, Any]) -> str:
    """Each {name} of `text` replaced by params[name], as the page's say() does."""
    return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m.group(1), m.group(0))), text)


def say(lang: str, message_id: str, **params: Any) -> str:
    """One of the scripts' sentences (by id) in `lang`, for a template: the same catalog entry
    the page's say() reads, so a word the form and the summary share is translated once."""
    entry = page_messages(lang).get(message_id)
    if entry is None and lang != DEFAULT:
        entry = page_messages(DEFAULT).get(message_id)
    if isinstance(entry, dict):
        category = Locale.parse(lang).plural_form(params.get("count", 0))
        entry = entry.get(category, entry.get("other"))
    return fill(entry if isinstance(entry, str) else message_id, params)


@pass_context
def context_say(context: Context, message_id: str, **params: Any) -> str:
    language = context.get("language")
    return say(
        language.code if isinstance(language, PageLanguage) else DEFAULT, message_id, **params
    )
