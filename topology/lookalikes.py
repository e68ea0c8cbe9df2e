"""Device names that are not what they look like: hidden characters, or letters of another script that look Latin.

A switch whose name has a Cyrillic ``\\u0430`` where the plan has a Latin ``a`` is another device to every comparison,
yet it prints exactly like the planned one: ``verify`` would list the same-looking name as both "not in the plan"
and "planned but absent". Where names are compared, they are checked here: ``oddity`` says what in a name is not
plain printable ASCII, and ``skeleton`` folds a name to what it looks like (compatibility forms, Cyrillic, Greek
and Armenian letters that look Latin, dashes and slashes that look like ASCII ones, hidden characters dropped), so
two names with one skeleton look alike.

The look-alike table is the letters that are drawn like a Latin letter in common fonts (Unicode's confusables
list, cut to the scripts a device name is likely to meet); it need not be complete, because any name that is not
ASCII is flagged anyway: the table only names which planned device it imitates.
"""

from __future__ import annotations

import unicodedata

from topology.printable import visible

_LOOK_ALIKES = {
    "A": ("CYRILLIC CAPITAL LETTER A", "GREEK CAPITAL LETTER ALPHA"),
    "B": ("CYRILLIC CAPITAL LETTER VE", "GREEK CAPITAL LETTER BETA"),
    "C": ("CYRILLIC CAPITAL LETTER ES",),
    "E": ("CYRILLIC CAPITAL LETTER IE", "GREEK CAPITAL LETTER EPSILON"),
    "H": ("CYRILLIC CAPITAL LETTER EN", "GREEK CAPITAL LETTER ETA"),
    "I": ("CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "CYRILLIC LETTER PALOCHKA", "GREEK CAPITAL LETTER IOTA"),
    "J": ("CYRILLIC CAPITAL LETTER JE",),
    "K": ("CYRILLIC CAPITAL LETTER KA", "GREEK CAPITAL LETTER KAPPA"),
    "M": ("CYRILLIC CAPITAL LETTER EM", "GREEK CAPITAL LETTER MU"),
    "N": ("GREEK CAPITAL LETTER NU",),
    "O": ("CYRILLIC CAPITAL LETTER O", "GREEK CAPITAL LETTER OMICRON"),
    "P": ("CYRILLIC CAPITAL LETTER ER", "GREEK CAPITAL LETTER RHO"),
    "Q": ("CYRILLIC CAPITAL LETTER QA",),
    "S": ("CYRILLIC CAPITAL LETTER DZE",),
    "T": ("CYRILLIC CAPITAL LETTER TE", "GREEK CAPITAL LETTER TAU"),
    "W": ("CYRILLIC CAPITAL LETTER WE",),
    "X": ("CYRILLIC CAPITAL LETTER HA", "GREEK CAPITAL LETTER CHI"),
    "Y": ("CYRILLIC CAPITAL LETTER U", "CYRILLIC CAPITAL LETTER STRAIGHT U", "GREEK CAPITAL LETTER UPSILON"),
    "Z": ("GREEK CAPITAL LETTER ZETA",),
    "a": ("CYRILLIC SMALL LETTER A", "GREEK SMALL LETTER ALPHA"),
    "c": ("CYRILLIC SMALL LETTER ES",),
    "d": ("CYRILLIC SMALL LETTER KOMI DE",),
    "e": ("CYRILLIC SMALL LETTER IE",),
    "g": ("LATIN SMALL LETTER SCRIPT G",),
    "h": ("CYRILLIC SMALL LETTER SHHA", "ARMENIAN SMALL LETTER HO"),
    "i": ("CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", "GREEK SMALL LETTER IOTA", "LATIN SMALL LETTER DOTLESS I"),
    "j": ("CYRILLIC SMALL LETTER JE",),
    "k": ("GREEK SMALL LETTER KAPPA",),
    "l": ("CYRILLIC SMALL LETTER PALOCHKA",),
    "n": ("ARMENIAN SMALL LETTER VO",),
    "o": ("CYRILLIC SMALL LETTER O", "GREEK SMALL LETTER OMICRON", "ARMENIAN SMALL LETTER OH"),
    "p": ("CYRILLIC SMALL LETTER ER", "GREEK SMALL LETTER RHO"),
    "q": ("CYRILLIC SMALL LETTER QA",),
    "s": ("CYRILLIC SMALL LETTER DZE",),
    "u": ("GREEK SMALL LETTER UPSILON", "ARMENIAN SMALL LETTER SEH"),
    "v": ("GREEK SMALL LETTER NU",),
    "w": ("CYRILLIC SMALL LETTER WE",),
    "x": ("CYRILLIC SMALL LETTER HA",),
    "y": ("CYRILLIC SMALL LETTER U", "CYRILLIC SMALL LETTER STRAIGHT U"),
    "-": ("HYPHEN", "NON-BREAKING HYPHEN", "FIGURE DASH", "EN DASH", "EM DASH", "HORIZONTAL BAR", "MINUS SIGN"),
    "/": ("FRACTION SLASH", "DIVISION SLASH"),
}
"""Each ASCII character and the characters of other scripts drawn like it, by their Unicode names (written as
names, so that this file shows which is which)."""

_LOOKS_LATIN = {ord(unicodedata.lookup(name)): latin for latin, names in _LOOK_ALIKES.items() for name in names}


def skeleton(name: str) -> str:
    """What ``name`` looks like: two names with the same skeleton are told apart by no one reading them."""
    if name.isascii() and name.isprintable():  # every planned name, as a rule: NFKC, the table and the filter keep it
        return name.casefold()
    shown = unicodedata.normalize("NFKC", name).translate(_LOOKS_LATIN)
    return "".join(char for char in shown if char.isprintable()).casefold()


def oddity(name: str) -> str | None:
    """What in ``name`` is not plain printable ASCII (each such character, its code point, name and place), or
    None for a plain name."""
    if name.isascii() and name.isprintable():
        return None
    odd = [(place, char) for place, char in enumerate(name, 1) if not (char.isascii() and char.isprintable())]
    hidden = [f"{visible(char)} at {place}" for place, char in odd if not char.isprintable()]
    foreign = [f"{char!r} U+{ord(char):04X} {unicodedata.name(char, '(unnamed)')} at {place}"
               for place, char in odd if char.isprintable()]
    parts = ([f"hidden characters: {', '.join(hidden)}"] if hidden else []) + (
        [f"non-ASCII characters: {', '.join(foreign)}"] if foreign else [])
    return "; ".join(parts)
