"""A place statement ("started at X", "is at X", "joined X") gives a new value of the place its
subject already has: a school, an employer or a gym (`places.known_place`)."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K
from recall_extractors.stub import StubExtractor


async def facts(stub: StubExtractor, text: str, *known: K) -> set[tuple[str, str, str]]:
    return {(m.entity, m.attribute, m.value) for m in await stub.extract(text, known=known)
            if m.attribute}


@pytest.mark.parametrize("known,text,expected", [
    (K("mia", "school", "Oakwood Primary"),
     "Mia started at St Joseph's this term after we moved house",
     ("mia", "school", "St Joseph's")),
    (K("nora", "school", "Little Acorns"), "Nora's at Bright Horizons now",
     ("nora", "school", "Bright Horizons")),
    (K("user", "gym", "Planet Fitness"), "I joined Movement, the climbing gym down the street.",
     ("user", "gym", "Movement")),
])
async def test_the_place_the_subject_has_is_the_one_that_changes(stub, known, text, expected):
    assert expected in await facts(stub, text, known)


@pytest.mark.parametrize("known,text,attribute", [
    # the wording says which: a job is an employer, whatever the subject has
    ((K("mia", "school", "Oakwood Primary"),), "Mia got a Saturday job at Tesco", "employer"),
    # nothing known of the three: the rules' own reading
    ((), "Mia started at St Joseph's", None),
    # a gym read by its name stays one beside a known employer
    ((K("user", "employer", "Acme"),), "I go to Planet Fitness", "gym"),
    # two of the three known: unsure which, so the rules' reading stays
    ((K("user", "school", "UCL"), K("user", "gym", "PureGym")), "I started at Acme Corp",
     None),
])
async def test_otherwise_the_rules_reading_stays(stub, known, text, attribute):
    plain = {f[1] for f in await facts(stub, text)}
    got = {f[1] for f in await facts(stub, text, *known)}
    assert got == plain
    if attribute:
        assert attribute in got
