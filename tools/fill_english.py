"""English is the source language: after `make messages` brings the catalogs up to date,
this fills each English entry with its msgid as written (so the English .mo holds every
entry). `make messages` runs it:

    .venv/bin/python -m tools.fill_english
"""

from __future__ import annotations

from pathlib import Path

from babel.messages.pofile import read_po, write_po

from app.web.i18n import DOMAIN, LOCALE_DIR


def fill_english(po_path: Path) -> int:
    """English is the source language: its catalog says each msgid as written (so the .mo
    holds every entry). Returns how many entries it filled."""
    with po_path.open("rb") as file:
        catalog = read_po(file, locale="en")
    filled = 0
    for message in catalog:
        if not message.id or message.fuzzy:
            continue
        if isinstance(message.id, tuple):
            if not isinstance(message.string, tuple) or not all(message.string):
                message.string = tuple(message.id)
                filled += 1
        elif not message.string:
            message.string = message.id
            filled += 1
    with po_path.open("wb") as file:
        write_po(file, catalog, width=0, ignore_obsolete=True)
    return filled


def main() -> None:
    english = LOCALE_DIR / "en" / "LC_MESSAGES" / f"{DOMAIN}.po"
    print(f"{english}: {fill_english(english)} entries filled")


if __name__ == "__main__":
    main()
