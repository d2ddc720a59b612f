"""Readings of the eighteenth round of issue 27: someone's home in a town, a job started or
retired from, a provider or device named in passing, lessons taken, and services named bare.
Each positive case has a guard beside it that the reading must not take."""

from __future__ import annotations

import pytest


async def facts(stub, text):
    return [(m.entity, m.attribute, m.value) for m in await stub.extract(text) if m.attribute]


@pytest.mark.parametrize("text,fact", [
    ("Priya's flat in Hyderabad is near Banjara Hills, any good cafes close to her place?",
     ("priya", "location", "Hyderabad")),
    ("what's an easy gift to ship to my mom's condo in Tucson? her birthday is on the 12th",
     ("mother", "location", "Tucson")),
    ("Visited Daniel at his new place in Glasgow last weekend, lovely flat.",
     ("daniel", "location", "Glasgow")),
    ("Jo finally got her place in Aberdeen! whats a good housewarming present",
     ("jo", "location", "Aberdeen")),
    ("Tom's back in Dundee, so we can finally meet for lunch.", ("tom", "location", "Dundee")),
])
async def test_someones_home_in_a_town_is_where_they_live(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "Priya's holiday flat in Goa is lovely",   # not where she lives
    "My studio in Hackney is cold",           # a studio may be where one works
    "Priya used to have a flat in Hyderabad",  # the past
])
async def test_no_home_of_theirs(stub, text):
    assert not [f for f in await facts(stub, text) if f[1] == "location"]


@pytest.mark.parametrize("text,fact", [
    ("Lucy's started at Spire, the private hospital, so her shifts are better.",
     ("lucy", "employer", "Spire")),
    ("jake got taken on at the Nando's in town, better hours than his last job",
     ("jake", "employer", "Nando's")),
    ("My wife ended up taking the job at Dubai College, so we're looking at villas.",
     ("wife", "employer", "Dubai College")),
    ("Dan's doing 12 hour shifts at the Amazon warehouse, we never see each other lol.",
     ("dan", "employer", "Amazon warehouse")),
])
async def test_where_someone_now_works(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text,fact", [
    ("Raj started his new job as a high school math teacher",
     ("raj", "occupation", "high school math teacher")),
    ("wife started as a practice nurse at the surgery on monday",
     ("wife", "occupation", "practice nurse")),
    ("Priya's retrained as a primary teacher, she qualified in July",
     ("priya", "occupation", "primary teacher")),
    ("First week as a data analyst went fine!", ("user", "occupation", "data analyst")),
    ("my dad retired last year", ("father", "occupation", "retired")),
    ("Officially retired now, can you believe it.", ("user", "occupation", "retired")),
])
async def test_what_someone_now_does(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "We retired Chef entirely, Ansible covers everything it did",  # a thing retired
    "I retired my old laptop",
    "My wife's Starling account is frozen",  # her account, not her name
])
async def test_nobody_retired_and_no_name(stub, text):
    found = await facts(stub, text)
    assert not [f for f in found if f[1] in ("occupation", "partner")]


@pytest.mark.parametrize("text,fact", [
    ("Could you help me find the sort code for my Nationwide account?",
     ("user", "bank", "Nationwide")),
    ("Is it worth doing the spin classes that come with my David Lloyd membership?",
     ("user", "gym", "David Lloyd")),
    ("AT&T fiber got installed today, 4ms ping!!", ("user", "internet_provider", "AT&T")),
    ("The Virgin Media engineer is coming Thursday to fit the box",
     ("user", "internet_provider", "Virgin Media")),
    ("Opened an account at Ally and closed my Chase checking.", ("user", "bank", "Ally")),
    ("House insurance is with Aviva, renewal in October", ("user", "house_insurance", "Aviva")),
    ("My email is on Yahoo, I've had the same address since 2004",
     ("user", "email_provider", "Yahoo")),
    ("My health insurance is through Bupa via work.", ("user", "health_insurance", "Bupa")),
])
async def test_a_provider_named_in_passing(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "I'm closing my Monzo account",       # ended
    "Fiber installer came today!!",       # no provider named
    "The bill is with my mum",            # no service, no provider
    "how do I move money from my Barclays account to my Monzo one?",  # the one money leaves
])
async def test_no_provider(stub, text):
    found = await facts(stub, text)
    assert not [f for f in found if f[1] in ("bank", "internet_provider", "gym", "bill")]


@pytest.mark.parametrize("text,fact", [
    ("My grandson set me up with an iPhone SE at the weekend.", ("user", "phone", "iPhone SE")),
    ("We got grandma a Galaxy A15 for her birthday.", ("grandmother", "phone", "Galaxy A15")),
    ("put Fedora on the work laptop over the weekend because snaps were driving me nuts.",
     ("user", "os", "Fedora")),
    ("Finally wiped the Windows partition and went full Fedora.", ("user", "os", "Fedora")),
    ("Started Polish lessons since loads of our residents' families speak it",
     ("user", "learning", "Polish")),
    ("I'm having piano lessons these days with a lady from church", ("user", "learning", "piano")),
])
async def test_a_device_given_an_os_put_on_lessons_taken(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "I got Tom a Pixel case for Christmas",  # an accessory
    "I didn't put Linux on it",              # denied
    "I'm taking the kids to swimming lessons",
    "I'm doing two classes a week",
])
async def test_no_device_no_os_no_lessons(stub, text):
    found = await facts(stub, text)
    assert not [f for f in found if f[1] in ("phone", "os", "learning")]


@pytest.mark.parametrize("text", [
    "I work in Leeds city centre, right by the station.",
    "I work in London but live in Kent",
])
async def test_where_one_works_is_not_where_one_lives(stub, text):
    assert ("user", "location", "Leeds") not in await facts(stub, text)
    assert ("user", "location", "London") not in await facts(stub, text)


async def test_where_one_lives_said_beside_work_is_read(stub):
    assert ("user", "location", "Kent") in await facts(stub, "I work in London but live in Kent")


@pytest.mark.parametrize("text,fact", [
    ("the building got sold, our new landlord is a management company called Greystar.",
     ("user", "landlord", "Greystar")),
    ("my gym is a little place called Ironhouse", ("user", "gym", "Ironhouse")),
    ("new manager Derek isn't thrilled I leave at 3 for pickup.", ("user", "manager", "Derek")),
    ("emily's settling in well at Hillside Academy, first week done",
     ("emily", "school", "Hillside Academy")),
    ("Noah started sixth grade at Roosevelt Middle this fall", ("noah", "school",
                                                                "Roosevelt Middle")),
    ("I registered with Parkview Surgery after the move", ("user", "gp_surgery",
                                                           "Parkview Surgery")),
    ("registered with Bright Dental on the high street", ("user", "dentist", "Bright Dental")),
])
async def test_named_by_description_registration_or_school(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "I'm loving Pizza Express",        # no school by its name
    "I work at Riverside Medical Centre",  # where one works, not one's GP
])
async def test_no_school_no_practice(stub, text):
    found = await facts(stub, text)
    assert not [f for f in found if f[1] in ("school", "gp_surgery")]


@pytest.mark.parametrize("text,fact", [
    ("I get my prescriptions filled at the CVS on Main", ("user", "pharmacy", "CVS")),
    ("I do my grocery shopping at Kroger on Sundays", ("user", "grocery_store", "Kroger")),
    ("I always fly Delta, I'm chasing silver status this year", ("user", "airline", "Delta")),
    ("we ship all our Etsy orders with UPS", ("user", "shipping_carrier", "UPS")),
    ("Evri collect the shop orders at 2pm", ("user", "shipping_carrier", "Evri")),
])
async def test_a_shop_or_carrier_used_by_habit(stub, text, fact):
    assert fact in await facts(stub, text)


@pytest.mark.parametrize("text", [
    "I bought new boots",             # a word, not the chemist
    "I never fly Ryanair",            # denied
    "Is Aldi any good?",              # no habit said
])
async def test_no_shop_no_carrier(stub, text):
    found = await facts(stub, text)
    assert not [f for f in found if f[1] in ("pharmacy", "grocery_store", "airline",
                                             "shipping_carrier")]
