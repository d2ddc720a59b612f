"""Statements beside a known fact that state no new value of it (issue 27): each was read as
one and superseded a true fact (a fresh set's separate pairs, sixteenth round). A negation
with an adverb of certainty, a state that is over, what one is learning, someone named after
their job."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K


async def facts(stub, text, *known):
    return [(m.entity, m.attribute, m.value) for m in await stub.extract(text, known=known)
            if m.attribute]


@pytest.mark.parametrize("text,known", [
    # "definitely" between the verb and its "not" hid the negation
    ("We're definitely not moving to Bitbucket, whatever the new CTO says.",
     K("team", "code_host", "GitHub")),
    ("I'm honestly never going back to Windows.", K("user", "os", "macOS")),
    # "back at uni" is the past, as "back in uni" was
    ("Back at uni I used Evernote for years", K("user", "notes_app", "Obsidian")),
    # a home in the simple past, bounded by a stretch of time, is over
    ("We rented a flat in Leeds for a couple of years before the kids came along",
     K("user", "location", "Harrogate")),
])
async def test_no_value_of_the_known_fact(stub, text, known):
    assert not [f for f in await facts(stub, text, known)
                if (f[0], f[1]) == (known.entity, known.attribute)]


async def test_a_home_taken_now_is_still_read(stub):
    """The bounded past does not touch a home rented now, nor the present perfect."""
    known = K("user", "location", "York")
    assert ("user", "location", "Leeds") in await facts(stub, "We just rented a flat in Leeds",
                                                         known)
    assert ("user", "location", "Leeds") in await facts(stub, "I've lived in Leeds for years",
                                                         known)


async def test_a_language_learnt_is_not_the_one_worked_in(stub):
    out = await facts(stub, "I'm learning Rust in the evenings just for fun",
                      K("user", "language", "Python"))
    assert out == [("user", "learning", "Rust")]


async def test_someone_named_after_their_job_is_that_person(stub):
    """ "Our new barista Leah": Leah's home, not the speaker's; a thing's name after its
    noun stays a thing ("my editor Vim")."""
    known = K("user", "location", "Cardiff")
    assert not [f for f in await facts(stub, "Our new barista Leah lives out in Newport", known)
                if f[0] == "user"]
    assert await facts(stub, "Our new barista Leah lives in Newport", known) == \
        [("leah", "location", "Newport")]
    assert ("user", "location", "Newport") not in await facts(
        stub, "Our intern Sam lives in Newport", K("user", "location", "Cardiff"))
