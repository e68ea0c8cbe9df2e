"""Names that are not what they look like: flagged, and matched to the planned name they imitate."""

from __future__ import annotations

import io

from topology.formats.ndt import parse_ndt
from topology.lookalikes import oddity, skeleton
from topology.model import Fabric
from topology.verify import OddName, verify

CYRILLIC_A = "\N{CYRILLIC SMALL LETTER A}"


def _fabric(text: str, source: str) -> Fabric:
    return parse_ndt(io.StringIO("StartDevice,StartPort,EndDevice,EndPort\n" + text), source)


def test_a_cyrillic_letter_looks_latin_and_says_so() -> None:
    fake = f"pod01-le{CYRILLIC_A}f01"
    assert fake != "pod01-leaf01" and skeleton(fake) == skeleton("POD01-LEAF01")
    assert oddity(fake) == f"non-ASCII characters: '{CYRILLIC_A}' U+0430 CYRILLIC SMALL LETTER A at 9"
    assert oddity("pod01-leaf01") is None


def test_hidden_characters_are_named_by_their_escapes() -> None:
    assert oddity("leaf\u200b01\x00") == "hidden characters: \\u200b at 5, \\x00 at 8"
    assert skeleton("leaf\u200b01") == skeleton("leaf01") and skeleton("pod01\N{EN DASH}leaf01") == "pod01-leaf01"


def test_verify_names_the_planned_device_an_as_built_one_imitates() -> None:
    plan = _fabric("pod01-leaf01,1,pod01-spine01,1\n", "plan.csv")
    actual = _fabric(f"pod01-le{CYRILLIC_A}f01,1,pod01-spine01,1\n", "as-built.csv")
    report = verify(plan, actual)
    assert not report.matches
    assert report.odd_names == [OddName("as-built", f"pod01-le{CYRILLIC_A}f01",
                                        f"non-ASCII characters: '{CYRILLIC_A}' U+0430 CYRILLIC SMALL LETTER A at 9",
                                        "pod01-leaf01")]
    assert report.summary()["odd_names"] == 1
    assert report.to_dict()["odd_names"][0]["looks_like"] == "pod01-leaf01"


def test_a_plan_name_with_a_hidden_character_is_flagged_even_when_it_matches() -> None:
    plan = _fabric("pod01-leaf01\u200b,1,pod01-spine01,1\n", "plan.csv")
    report = verify(plan, _fabric("pod01-leaf01\u200b,1,pod01-spine01,1\n", "copy.csv"))
    assert report.matches
    assert [(odd.side, odd.why) for odd in report.odd_names] == [("plan", "hidden characters: \\u200b at 13"),
                                                                 ("as-built", "hidden characters: \\u200b at 13")]
