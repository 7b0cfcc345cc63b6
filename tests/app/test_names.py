"""Names compared by what they look like: the skeleton of app/wire/names.py over the UTS #39
prototypes that tools/make_prototypes.py writes from Unicode's confusables.txt."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.tables.values import BOT_NAMES
from app.wire import names
from app.wire.errors import ProtocolError
from app.wire.names import PROTOTYPES, UNICODE_VERSION, clean_name, read_prototypes, skeletons
from tools import make_prototypes

SAMPLE = """\ufeff# confusables.txt
# Date: 2026-08-06, 01:05:35 GMT
# \u00a9 2026 Unicode\u00ae, Inc.
# Version: 18.0.0
#
0430 ;\t0061 ;\tMA\t# ( \u0430 \u2192 a ) CYRILLIC SMALL LETTER A \u2192 LATIN SMALL LETTER A
006D ;\t0072 006E ;\tMA\t# ( m \u2192 rn ) LATIN SMALL LETTER M \u2192 LATIN SMALL LETTER R, N
"""


def test_the_generator_writes_every_prototype_with_its_source() -> None:
    text = make_prototypes.data_file(SAMPLE.encode())
    assert read_prototypes(text) == ("18.0.0", {"\u0430": "a", "m": "rn"})
    assert "dated\n# 2026-08-06" in text and "SHA-256" in text
    assert "# UNICODE LICENSE V3" in text and "# \u00a9 2026 Unicode\u00ae, Inc." in text


def test_the_generator_refuses_a_table_that_is_not_a_fixed_point() -> None:
    looping = SAMPLE + "0072 ;\t0072 0072 ;\tMA\t# r \u2192 rr\n"
    with pytest.raises(SystemExit, match="fixed point"):
        make_prototypes.data_file(looping.encode())


def test_the_generator_writes_the_file_the_app_reads() -> None:
    assert Path(names.__file__).parent / names.PROTOTYPES_FILE == make_prototypes.OUT


def test_the_checked_in_table_is_unicodes_whole_one() -> None:
    assert UNICODE_VERSION == "18.0.0"
    assert len(PROTOTYPES) == 6712  # the lines of confusables.txt 18.0.0
    assert PROTOTYPES["\u13da"] == "S"  # CHEROKEE LETTER DU
    assert PROTOTYPES["0"] == "O" and PROTOTYPES["I"] == "l"


@pytest.mark.parametrize(
    ("name", "looks_like"),
    [
        ("Hard b\u043et", "hard bot"),  # a Cyrillic o
        ("\uff28\uff41\uff52\uff44 \uff42\uff4f\uff54", "hard bot"),  # fullwidth
        ("\U0001d412\U0001d429\U0001d42b\U0001d428cket", "sprocket"),  # bold
        ("\u13daPR0CKET", "sprocket"),  # a Cherokee S, a zero
        ("Zo\u00eb", "zoe"),
    ],
)
def test_a_skeleton_is_what_a_name_looks_like_in_any_case(name: str, looks_like: str) -> None:
    (read,) = skeletons(looks_like)
    assert read in skeletons(name) and read in skeletons(looks_like.upper())
    assert all(skeletons(key) == {key} for key in skeletons(name))


def test_the_bots_names_are_refused_in_any_dress_and_peoples_pass() -> None:
    dressed = ["\u13daprocket", "Hard b\u1d0ft", "G\u0269zmo", "ROBO RITA", "VVidget", "P1XEL"]
    for name in dressed:
        with pytest.raises(ProtocolError):
            clean_name(name, BOT_NAMES)
    for person in ["Siti Nurhaliza", "Jos\u00e9", "\u0410\u0445\u043c\u0435\u0434", "Ian"]:
        assert clean_name(person, BOT_NAMES) == person


# ---- a name at a table, an avatar ---------------------------------------------------------

ANN = "Ann"


@pytest.mark.parametrize(
    "impostor",
    ["Ann", "ANN", "ann", "\u0410nn", "Ann.", "A nn", "\uff21\uff4e\uff4e", "Ann\u0301"],
)
def test_a_name_that_reads_like_anothers_reads_alike(impostor: str) -> None:
    assert names.looks_alike(impostor, ANN)


@pytest.mark.parametrize(
    "other", ["Anna", "Dan", "Jos\u00e9", "Ann Lee", "\u05e9\u05dc\u05d5\u05dd"]
)
def test_a_different_name_does_not(other: str) -> None:
    assert not names.looks_alike(other, ANN)


@pytest.mark.parametrize(
    "name",
    [
        "You",
        "you",
        "Y0U",
        "Kamu",
        "Big screen",
        "BIG SCREEN",
        "Skrin besar",
        "a" + "\u0301" * 19,  # one letter under 19 marks
        "\u0301" * 19,  # marks with nothing under them
        "A\u0301\u0302\u0303\u0304",  # four on one letter
        "\U0001d159",  # draws nothing
        "Ann\U0001d159",
        "\u3164",
        "!!!",  # no letter or digit
    ],
)
def test_the_pages_words_and_names_that_draw_nothing_or_pile_marks_are_refused(
    name: str,
) -> None:
    reserved = (*BOT_NAMES, *names.YOU_WORDS, *names.SCREEN_WORDS)
    with pytest.raises(ProtocolError) as refused:
        clean_name(name, reserved)
    assert refused.value.code == "bad_name"


@pytest.mark.parametrize(
    "name",
    ["Nguy\u1ec5n Th\u1ecb", "\u0e19\u0e49\u0e33", "Z\u00f6e", "R2-D2", "\u05e9\u05dc\u05d5\u05dd"],
)
def test_names_with_a_few_marks_and_other_scripts_pass(name: str) -> None:
    reserved = (*BOT_NAMES, *names.YOU_WORDS, *names.SCREEN_WORDS)
    assert clean_name(name, reserved) == name


def test_the_pages_own_words_are_its_catalogs_in_every_language() -> None:
    """What the page calls you and the shared screen, as app/locale says it in each
    language: each of those words is reserved (a language added must add its words)."""
    from babel.messages.pofile import read_po

    from app.web.i18n import LANGUAGES, LOCALE_DIR

    said: dict[str, set[str]] = {"you": set(), "tv.name": set()}
    for lang in LANGUAGES:
        with (LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as file:
            catalog = read_po(file, locale=lang)
        for message in catalog:
            if message.context in said:
                said[message.context].add(message.string or message.id)
    assert said["you"] == set(names.YOU_WORDS)
    assert said["tv.name"] == set(names.SCREEN_WORDS)


@pytest.mark.parametrize(
    ("avatar", "kept"),
    [
        ("\U0001f98a", "\U0001f98a"),
        ("\u2764\ufe0f", "\u2764\ufe0f"),
        ("\U0001f469\u200d\U0001f680", "\U0001f469\u200d\U0001f680"),
        ("\U0001f1f2\U0001f1fe", "\U0001f1f2\U0001f1fe"),
        (None, None),
        ("", None),
    ],
)
def test_an_avatar_is_one_rgi_emoji(avatar: str | None, kept: str | None) -> None:
    assert names.check_avatar(avatar) == kept


@pytest.mark.parametrize(
    "avatar",
    [
        "\u200d".join(["\u2588"] * 8),  # eight blocks joined: 148 px wide on a phone
        "\u200d".join(["\ufdfd"] * 8),
        "\u2764",  # unqualified: Unicode asks for its variation selector
        "\U0001f98a\U0001f98a",
        "\U0001f3fb",  # a skin tone alone is a component, not an emoji
        "A",
    ],
)
def test_anything_else_is_refused_as_an_avatar(avatar: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        names.check_avatar(avatar)
    assert refused.value.code == "bad_avatar"
