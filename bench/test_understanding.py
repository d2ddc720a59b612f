"""bench/understanding.py can fail: its judges report wrong outcomes as failures, the set's
halves are the ones the split rule gives, and the labels hold in the texts they name.

    python -m pytest bench/test_understanding.py -q
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from extraction_match import matches  # noqa: E402
from understanding import (Row, judge_change, judge_compound, judge_end, judge_ranking,  # noqa: E402
                           judge_separate, judge_statement, load_set, texts_of, triple_found)

CHANGE = {"kind": "change", "old": ["acme"], "new": ["globex"]}


def on(text: str, active: bool = True, *triple: str) -> Row:
    return Row(text, active, *triple)


# -- the set ------------------------------------------------------------------------------------

def test_halves_are_what_the_split_rule_gives():
    spec = importlib.util.spec_from_file_location("split", BENCH / "understanding" / "split.py")
    split = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(split)
    for half, rows in split.split(split.load_items()).items():
        assert (BENCH / "understanding" / f"{half}.jsonl").read_text(encoding="utf-8") \
            == split.render(rows), f"{half}.jsonl is not what split.py gives"


def test_labels_hold_in_the_texts_they_name():
    def says(terms, text):
        assert matches({"must": terms}, text), (terms, text)

    fresh = sorted((Path(__file__).parent / "understanding" / "fresh").glob("*.jsonl"))
    assert fresh  # the fresh sets run with --items are held to the same labels
    for item in [*load_set(), *(i for f in fresh for i in load_set(path=f))]:
        texts = texts_of(item)
        if item["kind"] == "change":
            says(item["old"], texts[0])
            says(item["new"], texts[-1])
            # else a memory of the old text would count as stating the new value
            assert not matches({"must": item["new"]}, texts[0]), item["id"]
            if "mid" in item:
                says(item["mid"], texts[1])
        for v in ([item["ended"], *item["kept"]] if item["kind"] == "end"
                  else item.get("values", [])):
            says(v["must"], texts[v["text"]])
        for s in item.get("statements", []):
            says(s["must"], texts[0])
        if item["kind"] == "statement" and item["must"]:
            says(item["must"], texts[0])


def test_both_halves_hold_every_kind():
    for half in ("tune", "confirm"):
        assert {i["kind"] for i in load_set(half)} == {"change", "end", "separate", "compound",
                                                       "statement"}
    assert not {i["id"] for i in load_set("tune")} & {i["id"] for i in load_set("confirm")}


# -- judges -------------------------------------------------------------------------------------

def test_a_change_passes_only_when_the_old_value_ended_and_the_new_is_current():
    old_ended = [on("The user works at Acme Corp.", False)]
    new = [on("The user started at Globex.")]
    assert judge_change(CHANGE, [old_ended, new])["pass"]
    assert not judge_change(CHANGE, [[on("The user works at Acme Corp.")], new])["pass"]
    # an extractor that stored nothing of the old text superseded nothing
    assert not judge_change(CHANGE, [[], new])["pass"]
    assert not judge_change(CHANGE, [old_ended, [on("Globex", False)]])["pass"]
    # a last text re-stating a value keyed from the middle one refreshes that row
    assert judge_change(CHANGE, [old_ended, [on("trying Globex")], [on("thanks", False)]])["pass"]
    mid = {**CHANGE, "mid": ["initech"]}
    assert not judge_change(mid, [old_ended, [on("Initech")], new])["pass"]
    assert judge_change(mid, [old_ended, [on("Initech", False)], new])["pass"]


def test_a_stale_value_ranked_above_the_current_one_is_reported():
    assert judge_ranking(CHANGE, ["Acme Corp", "Globex"])["stale_above"]
    assert judge_ranking(CHANGE, ["Acme Corp", "something else"])["stale_above"]
    assert not judge_ranking(CHANGE, ["Globex", "Acme Corp"])["stale_above"]
    # a result saying both ("moved from Acme to Globex") states the new value
    assert not judge_ranking(CHANGE, ["left Acme for Globex", "Acme"])["stale_above"]
    assert not judge_ranking(CHANGE, [])["stale_above"]


def test_an_ended_value_that_must_stay_is_a_false_supersession():
    item = {"ended": {"text": 0, "must": ["shellfish"]}, "kept": [{"text": 0, "must": ["peanut"]}]}
    one_memory = [on("allergic to peanuts and shellfish", False)]
    out = judge_end(item, [one_memory, [on("not allergic to shellfish")]])
    assert not out["pass"] and out["false_supersessions"] == 1
    split = [on("allergic to peanuts"), on("allergic to shellfish", False)]
    assert judge_end(item, [split, [on("not allergic to shellfish")]])["pass"]
    sep = {"values": [{"text": 0, "must": ["berlin"]}, {"text": 1, "must": ["munich"]}]}
    out = judge_separate(sep, [[on("lives in Berlin", False)], [on("works in Munich")]])
    assert not out["pass"] and out["false_supersessions"] == 1
    out = judge_separate(sep, [[on("lives in Berlin")], []])
    assert not out["pass"] and out["missing"] == 1 and out["false_supersessions"] == 0


def test_a_compound_passes_only_split_into_different_memories():
    item = {"statements": [{"must": ["dark mode"], "triple": None},
                           {"must": ["coffee"], "triple": None}]}
    parts = [on("The user prefers dark mode."), on("The user likes black coffee.")]
    whole = on("I prefer dark mode in every editor and I like my coffee black.")
    assert judge_compound(item, parts)["pass"]
    assert not judge_compound(item, [whole])["pass"]
    assert not judge_compound(item, [*parts, whole])["pass"]  # one memory holds both
    assert not judge_compound(item, [parts[0], on("likes black coffee", False)])["pass"]


def test_triples_compare_entity_attribute_head_and_value():
    rows = [on("x", True, "user", "likes:coffee", "coffee"), on("y", True, "Sarah", "employer",
                                                                "Acme Corp")]
    assert triple_found(["user", "likes|hobbies", "coffee"], rows)
    assert triple_found(["sarah", "employer", "Acme"], rows)
    assert not triple_found(["user", "employer", "Acme"], rows)
    assert not triple_found(["sarah", "employer", "Globex"], rows)
    fact = {"triple": ["sarah", "employer", "Acme"], "must": ["acme"]}
    assert not judge_statement(fact, [on("Sarah works at Acme")])["pass"]  # no triple
    chat = {"triple": None, "must": None}
    assert judge_statement(chat, [on("it rains")])["pass"]
    assert not judge_statement(chat, rows)["pass"]


# -- end to end ---------------------------------------------------------------------------------

async def test_the_harness_reports_known_outcomes_through_the_product():
    from understanding_selfcheck import selfcheck

    assert await selfcheck()
