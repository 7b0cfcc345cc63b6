"""What a person is called and shown as: a name checked for what it looks like (UTS #39
skeletons over Unicode's confusables, so that no two names at a table read alike and nobody
passes for a bot or for the page's own words), and an avatar checked to be one RGI emoji.

The prototypes are data (app/wire/data/confusables-prototypes.txt, written by
`python -m tools.make_prototypes` from Unicode's confusables.txt), read once at import.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from importlib import resources

import emoji

from app.wire.errors import ErrorCode, ProtocolError

NAME_MAX = 20
PROTOTYPES_FILE = "data/confusables-prototypes.txt"  # in this package


def read_prototypes(text: str) -> tuple[str, dict[str, str]]:
    """(Unicode's version, a character -> its prototype) from the data file's text: `#`
    comments, a `version` line, then one `SOURCE TARGET...` line (hex code points) each."""
    version, table = "", {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        first, *rest = line.split()
        if first == "version":
            (version,) = rest
        else:
            table[chr(int(first, 16))] = "".join(chr(int(cp, 16)) for cp in rest)
    return version, table


# A character -> its prototype (one or more characters; never itself a source).
UNICODE_VERSION, PROTOTYPES = read_prototypes(
    resources.files(__package__).joinpath(PROTOTYPES_FILE).read_text(encoding="utf-8")
)


# ---- names -------------------------------------------------------------------------------

# What the page calls people it names itself (static/js/messages.js "you" and "tv.name", in
# each language of app/locale; tests/app/test_names.py checks them against the catalogs): no
# person may be called what every screen calls you, and only a shared screen the screen's.
YOU_WORDS = ("You", "Kamu")
SCREEN_WORDS = ("Big screen", "Skrin besar")
# Combining marks on one character: Vietnamese stacks two (ệ), Thai a vowel and a tone, a
# pointed Hebrew letter three; more is text drawn over the lines around it.
MOST_MARKS = 3


def clean_name(name: str, reserved: Iterable[str] = ()) -> str:
    """The name as stored and shown: trimmed; refused when empty, long, with controls or
    line breaks, with a character that draws nothing, with no letter or digit, with a
    character under more than MOST_MARKS combining marks (or a mark with nothing under it),
    or dressed as a bot ("Hard bot"), or as one of the `reserved` names (the bots', the
    page's own words), compared by their skeletons (`skeletons`)."""
    trimmed = name.strip()
    if not 1 <= len(unicodedata.normalize("NFC", trimmed)) <= NAME_MAX:
        raise ProtocolError(ErrorCode.BAD_NAME, f"a name is 1 to {NAME_MAX} characters")
    if any(unicodedata.category(ch) in NAME_FORBIDDEN for ch in trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "a name cannot hold control characters")
    if any(ch in DRAW_NOTHING for ch in trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "a name cannot hold characters that draw nothing")
    if not any(unicodedata.category(ch)[0] in "LN" for ch in trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "a name needs a letter or a digit")
    if _marks_piled(trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, f"at most {MOST_MARKS} marks on a character")
    if BOT_LIKE.search(trimmed) or any(BOT_LIKE.search(key) for key in skeletons(trimmed)):
        raise ProtocolError(ErrorCode.BAD_NAME, "only bots are called bot")
    if any(looks_alike(trimmed, other) for other in reserved):
        raise ProtocolError(ErrorCode.BAD_NAME, "that name is a bot's, or the page's own word")
    return trimmed


def looks_alike(name: str, other: str) -> bool:
    """Whether two names read alike: a skeleton in common, spaces aside ("Ann", "ANN",
    a Cyrillic A before "nn", "Ann." and "A nn" all read as one name)."""
    return not _look(name).isdisjoint(_look(other))


def skeletons(text: str) -> frozenset[str]:
    """What `text` looks like: UTS #39's skeleton (every character replaced by the prototype
    Unicode's confusables.txt gives it: PROTOTYPES), in any case: of the text as
    typed and of the text in small letters (a capital I is drawn as l, a small i is not),
    each skeleton folded to small letters and taken again. Before, compatibility forms are
    folded (NFKD: fullwidth, ligatures, styled letters) and marks and the characters that
    draw nothing dropped; after, "vv" reads as "w" (confusables.txt leaves it out), and runs
    of spaces and punctuation between words are one space. Two names that share a skeleton
    read alike; a skeleton is for comparing, never for showing."""
    return frozenset((_skeleton(text), _skeleton(text.casefold())))


def _skeleton(text: str) -> str:
    drawn = _prototypes(unicodedata.normalize("NFKD", text))
    drawn = _prototypes(drawn.casefold()).casefold().replace("vv", "w")
    return " ".join(re.split(r"[\W_]+", drawn)).strip()


@functools.lru_cache(maxsize=4096)  # every name at a table, compared with each that joins
def _look(name: str) -> frozenset[str]:
    """A name's skeletons, of it as written and in capitals (PIXEL's I is an l), without
    spaces."""
    keys = skeletons(name) | skeletons(name.upper())
    return frozenset(key.replace(" ", "") for key in keys)


def _marks_piled(text: str) -> bool:
    """A character under more than MOST_MARKS combining marks, or a mark first."""
    run = MOST_MARKS  # a mark first has nothing under it
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.category(ch) in ("Mn", "Me"):
            run += 1
            if run > MOST_MARKS:
                return True
        else:
            run = 0
    return False


def _prototypes(text: str) -> str:
    """UTS #39's skeleton, less the marks: NFD, each character's prototype, NFD again."""
    kept = (ch for ch in unicodedata.normalize("NFD", text) if _drawn(ch))
    mapped = "".join(PROTOTYPES.get(ch, ch) for ch in kept)
    return "".join(ch for ch in unicodedata.normalize("NFD", mapped) if _drawn(ch))


def _drawn(ch: str) -> bool:
    """Not a mark (accents are not what a name is mistaken by), nor a character that draws
    nothing (UTS #39 drops the default-ignorable ones: format characters, variation
    selectors, the Hangul fillers)."""
    return unicodedata.category(ch) not in SKELETON_DROPS and ch not in DRAW_NOTHING


# Controls, format characters (zero-width ...), surrogates, private use, unassigned, and
# line and paragraph separators (U+2028, U+2029).
NAME_FORBIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Characters that are letters or symbols by category and draw nothing in the fonts phones
# carry: the Hangul fillers, the braille blank and the musical null notehead.
DRAW_NOTHING = frozenset("\u115f\u1160\u3164\uffa0\u2800\U0001d159")
BOT_LIKE = re.compile(r"\bbots?\b", re.IGNORECASE)  # the bots are "Easy bot", "Hard bot"
# What a skeleton leaves out: marks that do not take a space of their own (variation
# selectors are among them), and format characters.
SKELETON_DROPS = frozenset({"Mn", "Me", "Cf"})


# ---- avatars -----------------------------------------------------------------------------

# Every RGI emoji: the fully-qualified sequences of Unicode's emoji-test.txt, as the `emoji`
# package carries them (flags, keycaps, skin tones and ZWJ sequences among them).
RGI_EMOJI = frozenset(
    text
    for text, data in emoji.EMOJI_DATA.items()
    if data["status"] == emoji.STATUS["fully_qualified"]
)


def is_one_emoji(text: str) -> bool:
    """Whether `text` is exactly one RGI emoji, fully qualified: a pictograph (with its
    variation selector where Unicode asks for one), a skin-toned one, a ZWJ sequence, a flag
    or a keycap that Unicode recommends for general interchange. Letters, several emoji, an
    emoji with text around it, or a sequence Unicode does not list (eight blocks joined by
    ZWJs) are not."""
    return text in RGI_EMOJI


def check_avatar(avatar: str | None) -> str | None:
    """The avatar a person asks for: none (None or empty), or one RGI emoji; anything else
    is refused (bad_avatar)."""
    if avatar is None or not avatar.strip():
        return None
    if not is_one_emoji(avatar.strip()):
        raise ProtocolError(ErrorCode.BAD_AVATAR, "an avatar is one emoji (RGI), or none")
    return avatar.strip()


def clean_avatar(avatar: object) -> str | None:
    """An avatar read back from a snapshot: one RGI emoji, else none (one a release of other
    rules kept is dropped: the person keeps their initial)."""
    if not isinstance(avatar, str):
        return None
    avatar = avatar.strip()
    return avatar if is_one_emoji(avatar) else None
