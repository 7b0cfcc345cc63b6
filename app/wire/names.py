"""What a person is called and shown as: a name checked for what it looks like (UTS #39
skeletons over Unicode's confusables, so that no two names at a table read alike and nobody
passes for a bot), and an avatar checked to be one emoji.

The prototypes are data (app/wire/data/confusables-prototypes.txt, written by
`python -m tools.make_prototypes` from Unicode's confusables.txt), read once at import.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from importlib import resources

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


def clean_name(name: str, reserved: Iterable[str] = ()) -> str:
    """The name as stored and shown: trimmed; refused when empty, long, with controls or
    line breaks, with nothing visible in it, or dressed as a bot: "Hard bot", or one of
    the `reserved` names (the bots'), compared by their skeletons (`skeletons`)."""
    trimmed = name.strip()
    if not 1 <= len(trimmed) <= NAME_MAX:
        raise ProtocolError(ErrorCode.BAD_NAME, f"a name is 1 to {NAME_MAX} characters")
    if any(unicodedata.category(ch) in NAME_FORBIDDEN for ch in trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "a name cannot hold control characters")
    if not any(_visible(ch) for ch in trimmed):
        raise ProtocolError(ErrorCode.BAD_NAME, "a name needs a letter, digit or sign")
    drawn = skeletons(trimmed)
    if BOT_LIKE.search(trimmed) or any(BOT_LIKE.search(key) for key in drawn):
        raise ProtocolError(ErrorCode.BAD_NAME, "only bots are called bot")
    spaceless = {key.replace(" ", "") for key in drawn}
    if any(not spaceless.isdisjoint(_spaceless_skeletons(other)) for other in reserved):
        raise ProtocolError(ErrorCode.BAD_NAME, "that name is a bot's")
    return trimmed


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


@functools.lru_cache(maxsize=64)  # the bots' names, compared with every name that joins
def _spaceless_skeletons(name: str) -> frozenset[str]:
    """A reserved name's skeletons, of it as written and in capitals (PIXEL's I is an l)."""
    keys = skeletons(name) | skeletons(name.upper())
    return frozenset(key.replace(" ", "") for key in keys)


def _prototypes(text: str) -> str:
    """UTS #39's skeleton, less the marks: NFD, each character's prototype, NFD again."""
    kept = (ch for ch in unicodedata.normalize("NFD", text) if _drawn(ch))
    mapped = "".join(PROTOTYPES.get(ch, ch) for ch in kept)
    return "".join(ch for ch in unicodedata.normalize("NFD", mapped) if _drawn(ch))


def _drawn(ch: str) -> bool:
    """Not a mark (accents are not what a name is mistaken by), nor a character that draws
    nothing (UTS #39 drops the default-ignorable ones: format characters, variation
    selectors, the Hangul fillers)."""
    return unicodedata.category(ch) not in SKELETON_DROPS and ch not in BLANK_LETTERS


# Controls, format characters (zero-width ...), surrogates, private use, unassigned, and
# line and paragraph separators (U+2028, U+2029).
NAME_FORBIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Letters by category that draw nothing: the Hangul fillers and the braille blank.
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
BOT_LIKE = re.compile(r"\bbots?\b", re.IGNORECASE)  # the bots are "Easy bot", "Hard bot"
# What a skeleton leaves out: marks that do not take a space of their own (variation
# selectors are among them), and format characters.
SKELETON_DROPS = frozenset({"Mn", "Me", "Cf"})


def _visible(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category[0] in "LNPS" and ch not in BLANK_LETTERS


# ---- avatars -----------------------------------------------------------------------------


# What may follow an emoji's first character inside one emoji: a zero-width joiner (then
# another emoji), variation selectors, skin tones, tag characters (subdivision flags) and
# the keycap mark.
_ZWJ = "\u200d"
_KEYCAP = "\u20e3"
_KEYCAP_BASES = frozenset("0123456789#*")
_MAX_AVATAR_CHARS = 16  # the longest family and flag sequences are well under this


def _emoji_modifier(char: str) -> bool:
    code = ord(char)
    return (
        code in (0xFE0E, 0xFE0F)
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0020 <= code <= 0xE007F  # tags
    )


def _emoji_base(char: str) -> bool:
    code = ord(char)
    if 0x1F1E6 <= code <= 0x1F1FF:  # regional indicators: only as a pair (a flag)
        return False
    return unicodedata.category(char) == "So" and (code >= 0x2000 or char in "\u00a9\u00ae")


def is_one_emoji(text: str) -> bool:
    """Whether `text` is exactly one emoji as people see it (one grapheme): a pictograph
    with its modifiers, a ZWJ sequence of those, a flag (two regional indicators) or a
    keycap. Letters, several emoji, or an emoji with text around it are not."""
    if not 1 <= len(text) <= _MAX_AVATAR_CHARS:
        return False
    if len(text) == 2 and all(0x1F1E6 <= ord(c) <= 0x1F1FF for c in text):
        return True
    if text[0] in _KEYCAP_BASES:
        return text[1:] in (_KEYCAP, "\ufe0f" + _KEYCAP)
    for part in text.split(_ZWJ):
        if not part or not _emoji_base(part[0]):
            return False
        if not all(_emoji_modifier(c) for c in part[1:]):
            return False
    return True


def clean_avatar(avatar: object) -> str | None:
    """The avatar as kept: one emoji, else none (a stale or forged one is dropped, never
    refused: the person still gets in, with their initial)."""
    if not isinstance(avatar, str):
        return None
    avatar = avatar.strip()
    return avatar if is_one_emoji(avatar) else None
