"""The singular of a value's last word, for its key (`attributes.value_key`): "peanuts" and
"a peanut allergy" must meet at one key of a many-valued fact, whichever number a person or a
model wrote."""

from __future__ import annotations

# Names that end in "s" but are no plural.
_NOT_PLURAL = frozenset("""
postgres redis kubernetes jenkins windows rails express sass less news physics mathematics
series species analytics aws ios macos chaos atlas canvas lens gas bus christmas paris
athens texas kansas wales netherlands philippines emacs pilates darts billiards athletics
gymnastics politics economics aerobics diabetes measles rabies
""".split())
# Nouns in -ie, whose plural in -ies is no -y noun's ("movies" is no "movy").
_IE_NOUNS = frozenset("""
movie cookie brownie smoothie selfie zombie rookie hippie genie calorie pie tie lie veggie
indie techie foodie newbie goalie hoodie junkie auntie beanie roomie boogie birdie bookie
""".split())


def singular(word: str) -> str:
    """The word's singular, crudely ("peanuts" -> "peanut", "berries" -> "berry",
    "movies" -> "movie"): a value's key only has to be the same for both numbers."""
    if len(word) <= 3 or word in _NOT_PLURAL or word.endswith(("ss", "us", "is", "os")):
        return word
    if word.endswith("ies"):
        return word[:-1] if word[:-1] in _IE_NOUNS else word[:-3] + "y"
    if word.endswith(("ses", "xes", "shes", "ches", "zes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word
