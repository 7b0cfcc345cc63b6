"""The message catalogs kept stable: `make messages` brings each .po up to the extracted
template and changes only what changed; a stale .mo is compiled again.

    .venv/bin/python -m tools.catalogs update app/locale/messages.pot
    .venv/bin/python -m tools.catalogs compile

A .po holds no source locations (they move with every edit) and keeps the template's order
(the order sentences stand in the sources), so a new sentence is a new entry and nothing
else, not even the header's dates. English is the source language: its entries say each
msgid as written, so its .mo holds every entry. A catalog whose entries did not change is
not written at all.
"""

from __future__ import annotations

import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from app.web.i18n import DOMAIN, LANGUAGES, LOCALE_DIR

SOURCE_LANGUAGE = "en"


def po_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo"


def read(path: Path, lang: str) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=lang)


def entries(catalog: Catalog) -> list[tuple[object, ...]]:
    """What a translator or the page can see of a catalog: every entry, in order."""
    return [
        (m.context, m.id, m.string, tuple(m.auto_comments), tuple(m.user_comments), m.fuzzy)
        for m in catalog
        if m.id
    ]


def fill_source(catalog: Catalog) -> None:
    """The source language's entries say their msgid as written."""
    for message in catalog:
        if not message.id or message.fuzzy:
            continue
        if isinstance(message.id, tuple):
            if not isinstance(message.string, tuple) or not all(message.string):
                message.string = tuple(message.id)
        elif not message.string:
            message.string = message.id


def update(template_path: Path) -> list[str]:
    """Brings every language's .po up to the template; returns the languages written."""
    written = []
    for lang in LANGUAGES:
        # Read again for each language: Catalog.update adds the template's own new entries,
        # which English then fills in, and the next language would get English as its own.
        with template_path.open("rb") as file:
            template = read_po(file)
        path = po_path(lang)
        catalog = read(path, lang)
        before = entries(catalog)
        # The template's creation date changes with every extraction: not a change.
        catalog.update(
            template,
            no_fuzzy_matching=True,
            update_header_comment=False,
            update_creation_date=False,
        )
        if lang == SOURCE_LANGUAGE:
            fill_source(catalog)
        for message in catalog:
            message.locations = []
        if entries(catalog) == before:
            continue
        with path.open("wb") as file:
            write_po(file, catalog, width=0, ignore_obsolete=True, omit_header=False)
        written.append(lang)
    return written


def stale() -> list[str]:
    """The languages whose .mo is missing or older than their .po."""
    return [
        lang
        for lang in LANGUAGES
        if not mo_path(lang).exists()
        or mo_path(lang).stat().st_mtime < po_path(lang).stat().st_mtime
    ]


def compile_stale() -> list[str]:
    """Compiles every stale .mo (as `make catalogs` would); returns the languages compiled."""
    languages = stale()
    for lang in languages:
        catalog = read(po_path(lang), lang)
        with mo_path(lang).open("wb") as file:
            write_mo(file, catalog)
    return languages


def main(argv: list[str]) -> int:
    if argv[:1] == ["update"] and len(argv) == 2:
        written = update(Path(argv[1]))
        print("catalogs written: " + (", ".join(written) if written else "none (no change)"))
        return 0
    if argv == ["compile"]:
        compiled = compile_stale()
        print("catalogs compiled: " + (", ".join(compiled) if compiled else "none (all fresh)"))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
