"""People a user has one of at a time (a doctor, a landlord, a therapist, as a partner or a
manager) are facts of the user's, read from one map (`subjects.ROLE_OF`) by every rule that
reads a relation's name; relations one may have several of name no fact (issue 27)."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K


def facts(out):
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


@pytest.mark.parametrize("first,later,key,old,new", [
    ("My doctor is Dr. Brown.", "I've registered with a new GP, Dr. Singh.", "doctor",
     "Dr. Brown", "Dr. Singh"),
    ("My doctor is Dr. Brown.", "My new doctor is Dr. Singh.", "doctor", "Dr. Brown",
     "Dr. Singh"),
    ("My landlord is Mr. Patel.", "We have a new landlord, Ms. Ortiz.", "landlord",
     "Mr. Patel", "Ms. Ortiz"),
    ("My therapist is Dr. Lee.", "Dr. Okafor is my therapist now.", "therapist", "Dr. Lee",
     "Dr. Okafor"),
])
async def test_a_new_person_in_a_role_replaces_the_old(stub, first, later, key, old, new):
    assert facts(await stub.extract(first)) == [("user", key, old)]
    known = [K("user", key, old)]
    assert facts(await stub.extract(later, known=known)) == [("user", key, new)]


@pytest.mark.parametrize("text", ["My brother is Tom.", "My friend is Anna.",
                                  "My colleague is Anna Smith."])
async def test_a_relation_one_has_several_of_names_no_fact(stub, text):
    # before: "My brother is Tom" was read as the brother's partner
    assert facts(await stub.extract(text)) == []


async def test_a_relations_other_facts_are_still_read(stub):
    assert facts(await stub.extract("My son is 7 and my sister is a nurse.")) == [
        ("son", "age", "7"), ("sister", "occupation", "nurse")]
    assert facts(await stub.extract("My sister moved to Adelaide.")) == [
        ("sister", "location", "Adelaide")]


async def test_a_name_with_s_after_my_noun_is_the_value(stub):
    # was ("king", "school", "uni"): "King's" read as the owner of "College"
    assert facts(await stub.extract("My uni is King's College now.")) == [
        ("user", "school", "King's College")]
    assert facts(await stub.extract("Anna is Ravi's wife.")) == [("ravi", "partner", "Anna")]


async def test_a_description_of_a_relation_is_not_their_name(stub):
    # was the user's partner "Fedora guy"; a tool's guy is one who uses it: his OS
    assert facts(await stub.extract("My husband's a Fedora guy, won't touch anything else.")) \
        == [("husband", "os", "Fedora")]
    assert facts(await stub.extract("My husband is a teacher.")) == [
        ("husband", "occupation", "teacher")]


async def test_a_thing_for_us_is_the_teams(stub):
    # was the entity "ci for us"
    assert facts(await stub.extract("CI for us is GitHub Actions, nothing fancy.")) == [
        ("team", "ci", "GitHub Actions")]
