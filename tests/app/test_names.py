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
