"""One fact, one key, however its owner is named (issue 27): a bare relation with any verb of
its own ("Dad sold his truck"), "company chat", "the whole service", and "our" for what a
household shares ("our internet provider", "our bank", "our car") are keyed as the earlier
statement of the same fact was, so the later one supersedes it."""

from __future__ import annotations

import pytest

from recall_core.contracts import KnownFact as K


def triples(out) -> list[tuple]:
    return [(m.entity, m.attribute, m.value) for m in out if m.attribute]


@pytest.mark.parametrize("first,later,old,new", [
    ("dad drives a Ford F-150", "Dad sold his truck and bought a Prius",
     ("father", "car", "Ford F-150"), ("father", "car", "Prius")),
    ("company chat is Slack", "company moved us to Microsoft Teams",
     ("team", "chat_tool", "Slack"), ("team", "chat_tool", "Microsoft Teams")),
    ("the service is written in Python", "we rewrote the whole service in Go last quarter.",
     ("service", "language", "Python"), ("service", "language", "Go")),
    ("internet is Comcast, it drops every evening", "our internet provider is Sonic now",
     ("user", "internet_provider", "Comcast"), ("user", "internet_provider", "Sonic")),
    ("I bank with Chase", "our bank is Ally now",
     ("user", "bank", "Chase"), ("user", "bank", "Ally")),
    # the team's thing named in the clause is what a "we" statement is about
    ("the site is hosted on Heroku", "we host the site on Fly.io, how do I set env vars",
     ("site", "cloud", "Heroku"), ("site", "cloud", "Fly.io")),
    # all of one's things are the owner's
    ("our stuff is all on AWS", "we're on GCP, how do service accounts work there",
     ("team", "cloud", "AWS"), ("team", "cloud", "GCP")),
    # the one thing whose fact of the kind is known, when the team says it changed it
    ("our app stores everything in MySQL", "we migrated to Postgres over the summer.",
     ("app", "database", "MySQL"), ("app", "database", "Postgres")),
    # what a team holds, said by one of it, is the team's known fact
    ("we keep all our code on Bitbucket", "Moved all our repos to GitLab over the weekend.",
     ("team", "code_host", "Bitbucket"), ("team", "code_host", "GitLab")),
])
async def test_a_later_statement_takes_the_earlier_ones_key(stub, first, later, old, new):
    before = triples(await stub.extract(first))
    assert old in before
    known = [K(*t, first) for t in before]
    assert new in triples(await stub.extract(later, known=known))


@pytest.mark.parametrize("text,expected", [
    ("our database is Postgres", ("team", "database", "Postgres")),
    ("our chat is Slack", ("team", "chat_tool", "Slack")),
    ("my mom retired and moved to Tucson", ("mother", "location", "Tucson")),
])
async def test_a_teams_or_a_relations_fact_stays_theirs(stub, text, expected):
    assert expected in triples(await stub.extract(text))


@pytest.mark.parametrize("text,expected", [
    ("my daughter Emma's favourite food is mac and cheese", ("emma", "favorite_food",
                                                             "mac and cheese")),
    ("I go to Planet Fitness near my office after work", ("user", "gym", "Planet Fitness")),
    ("i'm a cashier at target", ("user", "employer", "target")),
    ("my sister is a nurse at kaiser", ("sister", "employer", "kaiser")),
    ("the new owners made me head chef.", ("user", "occupation", "head chef")),
    ("they promoted me to senior engineer last week", ("user", "occupation", "senior engineer")),
    ("went back to work part-time as a bookkeeper", ("user", "occupation", "bookkeeper")),
    ("I'm a stay at home dad right now", ("user", "occupation", "stay-at-home dad")),
    # a relation named: the relation, and what is said of the person named
    ("my husband Raj is an accountant so during tax season he disappears",
     ("raj", "occupation", "accountant")),
    ("my wife Ana works at Globex", ("ana", "employer", "Globex")),
    ("my wife Ana works at Globex", ("user", "partner", "Ana")),
    ("Fleetwood Mac is my favorite band, full stop.", ("user", "favorite_band", "Fleetwood Mac")),
    ("ugh work switched us to Microsoft Teams.", ("team", "chat_tool", "Microsoft Teams")),
    ("our office uses Slack for pretty much everything", ("team", "chat_tool", "Slack")),
    ("I take the 42 bus to work, it's about 35 minutes", ("user", "commute", "bus")),
    ("Bristol already feels like home", ("user", "location", "Bristol")),
    ("First week at Mercy General is done!!", ("user", "employer", "Mercy General")),
    ("Emma's first day at Westview Middle went great", ("emma", "school", "Westview Middle")),
    ("I'm doing my nursing degree at Georgia State, part time",
     ("user", "school", "Georgia State")),
    ("Tom drives for FedEx, he's out the door at 5am", ("tom", "employer", "FedEx")),
    ("I work front desk at Brightwater Dental", ("user", "employer", "Brightwater Dental")),
    ("guess who got promoted to operations manager!!!",
     ("user", "occupation", "operations manager")),
    ("Luis left his old job and he's at Tesla now", ("luis", "employer", "Tesla")),
    ("My mate Tom works at Woolworths in the bakery section", ("tom", "employer", "Woolworths")),
    ("Nan lives on her own in Bournemouth", ("grandmother", "location", "Bournemouth")),
    ("mom moved into a retirement community in Tucson.", ("mother", "location", "Tucson")),
    ("The company moved the office to Canary Wharf in September.",
     ("team", "location", "Canary Wharf")),
    ("We moved into a new office in Dumbo", ("team", "location", "Dumbo")),
    ("My work machine runs Windows 11, fyi, so give me PowerShell commands",
     ("user", "os", "Windows 11")),
    ("our broadband is with BSNL and it keeps dropping", ("user", "internet_provider", "BSNL")),
    ("you can call me Alex, that's what everyone uses.", ("user", "name", "Alex")),
    ("Finally treated myself to a MacBook Air after my bonus came through!",
     ("user", "laptop", "MacBook Air")),
    ("been taking the train into work since my knee surgery", ("user", "commute", "train")),
    ("Shifted to Bengaluru last month for the new job", ("user", "location", "Bengaluru")),
    ("Good news, they put me on days from this week!", ("user", "work_hours", "days")),
    ("They changed my title to SRE manager after the reorg",
     ("user", "occupation", "SRE manager")),
    ("Dan took over as tech lead after the reorg", ("dan", "occupation", "tech lead")),
    ("I'm a backend dev at Quillstack, mostly python services",
     ("user", "employer", "Quillstack")),
    ("got promoted to staff engineer last cycle, which is great",
     ("user", "occupation", "staff engineer")),
    ("my wife quit the pharmacy and is retraining as a UX designer",
     ("wife", "occupation", "UX designer")),
    ("my car's a 2019 Mazda 3 hatchback, red, very loud", ("user", "car", "2019 Mazda 3 hatchback")),
    ("No, I live in Oslo", ("user", "location", "Oslo")),
    # a school by its name, where one starts with no word of work or role
    ("Maya started at Lincoln Middle School this week", ("maya", "school", "Lincoln Middle School")),
    ("Started at Riverside College this term for my A levels",
     ("user", "school", "Riverside College")),
    ("I started at Lincoln High as a teacher", ("user", "employer", "Lincoln High")),
    ("I teach at Lincoln High", ("user", "employer", "Lincoln High")),
    ("Maya got caught in the layoffs but she landed at Spotify within a month",
     ("maya", "employer", "Spotify")),
    ("Dev is out in Vancouver.", ("dev", "location", "Vancouver")),
    ("I drive a 2014 Toyota Yaris, when would the MOT normally be due?",
     ("user", "car", "2014 Toyota Yaris")),
    ("I get the 8.10 train into Leeds every day, it's always late", ("user", "commute", "train")),
    ("so I've taken a part-time job as a school receptionist.",
     ("user", "occupation", "school receptionist")),
    ("Freya qualified as a midwife last month!!", ("freya", "occupation", "midwife")),
    ("I cancelled the old membership and joined Riverside Leisure Centre instead",
     ("user", "gym", "Riverside Leisure Centre")),
    ("I've been seeing someone called Rhys for a few months now", ("user", "partner", "Rhys")),
])
async def test_what_a_statement_says_is_read(stub, text, expected):
    assert expected in triples(await stub.extract(text))


@pytest.mark.parametrize("text,attribute", [
    ("she made me dinner", "occupation"),          # a made thing is no role
    ("I've started eating fish again", "shell"),   # food is no tool
    ("I eat fish now", "shell"),
    ("I drive for Uber on weekends.", "employer"),  # a side gig beside the job
    ("I work nights at the hospital", "employer"),
    # an interview is no job yet
    ("I have a final round interview with Cloudflare on thursday!! fingers crossed",
     "employer"),
    ("got an interview at Stripe next week, nervous lol.", "employer"),
    ("my wife finishes at 5:30.", "bedtime"),       # a time of no sleep
    ("Got moved over to the search team this sprint", "mobile_carrier"),  # words, no names
    ("Dan took over, so architecture docs go to him now.", "language"),
    ("My laptop runs Windows for gaming.", "os"),   # a machine kept for one use
    ("our biggest competitor just migrated to Snowflake", "database"),  # theirs
    ("I've got an interview at Shopify on thursday, can you help me prep", "employer"),
    ("builds are at 25 min", "ci"),                   # a measure is no tool's name
    ("i'm a nurse at the hospital", "employer"),   # a common noun is no employer's name
    ("i'm a barista at a cafe downtown", "employer"),
    ("Melanie: I'm a product manager at the moment.", "employer"),
    ("I go to Lincoln High near the park", "gym"),
])
async def test_what_a_statement_does_not_say_is_not_read(stub, text, attribute):
    assert not [t for t in triples(await stub.extract(text)) if t[1] == attribute]


async def test_a_new_role_sharing_a_word_with_the_old_is_no_restatement(stub):
    """ "head chef" after "sous chef", beside a word that ends something ("Marco retired"),
    is the new value, not the known one said again."""
    known = [K("user", "occupation", "sous chef", "I'm a sous chef")]
    out = triples(await stub.extract(
        "long story but Marco (the owner) retired and the new owners made me head chef.",
        known=known))
    assert ("user", "occupation", "head chef") in out


async def test_a_denied_change_keeps_the_known_value(stub):
    """ "no I haven't switched to VS Code" names a new editor only to deny it."""
    known = [K("user", "editor", "Vim", "I use Vim")]
    out = triples(await stub.extract("no I haven't switched to VS Code, I tried it for a day "
                                     "and went back. can you show me a vim macro?", known=known))
    assert not [t for t in out if t[1] == "editor"]
    assert not [t for t in triples(await stub.extract("I haven't switched to VS Code"))
                if t[1] == "editor"]


async def test_a_relation_named_has_a_text_of_its_own(stub):
    """ "My husband Raj works at Infosys": the partner's memory says only that, so a later
    change of Raj's employer leaves no current text naming the old one."""
    out = await stub.extract("My husband Raj works at Infosys, he has late night calls")
    by = {(m.entity, m.attribute): m.text for m in out if m.attribute}
    assert by[("user", "partner")] == "My husband is Raj."
    assert "Infosys" in by[("raj", "employer")]


async def test_a_team_statement_unrelated_to_a_change_keeps_its_own_key(stub):
    known = [K("app", "database", "MySQL 5.7", "our app runs on MySQL 5.7")]
    out = triples(await stub.extract("we use Postgres for analytics", known=known))
    assert ("team", "database", "Postgres") in out


@pytest.mark.parametrize("text,texts", [
    # items that are phrases: each memory keeps its item's whole phrase
    ("We have a dog called Pepper and two rabbits",
     {"We have a dog called Pepper", "We have two rabbits"}),
    ("We have a cat, a hamster and some goldfish",
     {"We have a cat", "We have a hamster", "We have some goldfish"}),
    ("I have a son named Leo and a daughter named Ava",
     {"I have a son named Leo", "I have a daughter named Ava"}),
    # bare values as before
    ("I'm allergic to peanuts and shellfish",
     {"I'm allergic to peanuts", "I'm allergic to shellfish"}),
])
async def test_a_list_of_phrases_is_one_memory_per_phrase(stub, text, texts):
    assert {m.text for m in await stub.extract(text) if m.attribute} == texts


@pytest.mark.parametrize("first,later,ended", [
    ("I paint watercolours, knit, and do pottery on Tuesdays",
     "Pottery's over for me, the studio closed.", ("user", "hobbies:pottery", "no longer")),
    ("We have a dog called Pepper and two rabbits",
     "Sad news, our dog Pepper passed away last week.", ("user", "pets:pepper", "no longer")),
])
async def test_an_end_in_other_words_ends_one_value(stub, first, later, ended):
    known = [K(*t, first) for t in triples(await stub.extract(first))]
    assert ended in triples(await stub.extract(later, known=known))


@pytest.mark.parametrize("text", ["my grandpa passed away last year",
                                  "we're cutting the squash session short today"])
async def test_no_pet_or_hobby_ends_without_one(stub, text):
    assert not [t for t in triples(await stub.extract(text)) if t[2] == "no longer"]


async def test_a_fact_named_after_a_comma_is_its_own_statement(stub):
    out = triples(await stub.extract("favourite band is Radiohead, favourite film is Paris, Texas"))
    assert ("user", "favorite_band", "Radiohead") in out
    assert [t for t in out if t[1] == "favorite_movie"]
    out = triples(await stub.extract("my wife Elena, a pediatrician, works at Kaiser"))
    assert ("elena", "employer", "Kaiser") in out
