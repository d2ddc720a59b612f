"""A seeded synthetic benchmark: multi-session conversations of users with known facts,
facts that change over time, and questions with evidence ids, so retrieval figures are not
LoCoMo-only.

Each user (one namespace) talks to an assistant over several sessions two weeks apart.
Facts about the user (city, employer, editor, dog's name, ...) are stated in early sessions
among chit-chat and distractors (other people's facts, other topics, mentions of the same
values about someone else). Some facts change later ("I moved to Porto last month"). Every
fact gets one question:

* **static** ("What is the name of Sam's dog?"): the evidence is the turn that stated it.
* **current** ("Where does Sam live now?"): the evidence is the turn with the *latest* value;
  turns with earlier values are listed as `stale`. Besides recall, the report gives
  `stale_above`: how often an outdated statement ranks above the current one (or is
  returned while the current one is not) — the share of "what is X now?" questions an agent
  would answer with an old value — and `old_current`: how often an older value is still
  current at all (a current memory of an earlier turn still says it: not superseded by the
  write path), the only case where stale above can happen. A turn's other statements that
  stay true ("I work at Acme as an engineer": the role) do not count. Verbatim import keeps every statement (1.0); through extraction only a statement
  the extractor gives a fact key (entity/attribute) can supersede the earlier one.

The data has LoCoMo's shape, so it runs through bench/locomo.py's two write paths (verbatim,
extraction) and metrics. Users split into tune (first half) and confirm (second half).

    python bench/synthetic.py                  # generate (seed 14, 10 users) and measure
    python bench/synthetic.py --users 20 --seed 7 --dump /tmp/syn.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

NAMES = ["Sam", "Priya", "Tomás", "Aiko", "Lena", "Kwame", "Noor", "Mateo", "Ilse", "Ravi",
         "Zoe", "Omar", "Freya", "Hugo", "Mina", "Jonas", "Ada", "Felix", "Yara", "Luca"]

# attribute: (first statement, update statement or None for static facts, question, values)
FACTS = {
    "city": ("I live in {v} these days.", "I moved to {v} last month, still unpacking boxes.",
             "Where does {name} live now?",
             ["Lisbon", "Denver", "Osaka", "Nairobi", "Tallinn", "Porto", "Austin", "Leeds"]),
    "employer": ("I work at {v} as an engineer.", "I left my old job and I work at {v} now.",
                 "Where does {name} work now?",
                 ["Acme Robotics", "Globex", "Initech", "Umbrella Labs", "Hooli", "Vandelay"]),
    "editor": ("I use {v} for all my coding.", "I switched to {v} for coding, it is much faster.",
               "Which code editor does {name} use now?",
               ["vim", "VS Code", "Emacs", "Sublime Text", "Helix", "Zed"]),
    "food": ("My favourite food is {v}.", "Honestly my favourite food is {v} now.",
             "What is {name}'s favourite food now?",
             ["ramen", "lasagna", "tacos", "pho", "paella", "dumplings", "falafel"]),
    "car": ("I drive a {v} to work.", "I sold the old car, I drive a {v} now.",
            "What car does {name} drive now?",
            ["Toyota Corolla", "Honda Civic", "Tesla Model 3", "Volvo V60", "Ford Focus"]),
    "language": ("I am learning {v} in the evenings.", "I gave that up and I am learning {v} now.",
                 "Which language is {name} learning now?",
                 ["Japanese", "Portuguese", "Swahili", "Finnish", "Korean", "Italian"]),
    "dog": ("I have a dog named {v}.", None, "What is the name of {name}'s dog?",
            ["Biscuit", "Pepper", "Nova", "Mango", "Ziggy", "Luna", "Rocket"]),
    "partner": ("My partner {v} is a nurse at the city hospital.", None,
                "What is the name of {name}'s partner?",
                ["Alex", "Jordan", "Robin", "Sasha", "Kim", "Charlie"]),
    "sport": ("I play {v} every Thursday evening.", None, "Which sport does {name} play on Thursdays?",
              ["badminton", "volleyball", "squash", "water polo", "ultimate frisbee"]),
    "allergy": ("I am allergic to {v}, so I always check labels.", None, "What is {name} allergic to?",
                ["peanuts", "shellfish", "penicillin", "cats", "pollen"]),
}
# Someone else's fact with the same kind of value: keywords alone cannot tell them apart.
DISTRACTORS = {
    "city": "My sister lives in {v}, I visit her twice a year.",
    "employer": "My friend just got an offer from {v}.",
    "editor": "A colleague keeps telling me to try {v}.",
    "food": "My brother cooks amazing {v}.",
    "car": "My neighbour bought a {v} last week.",
    "language": "My cousin speaks fluent {v}.",
    "dog": "The dog next door is called {v}.",
    "partner": "My colleague {v} is getting married in June.",
    "sport": "I watched a {v} match on TV yesterday.",
    "allergy": "My son's friend is allergic to {v}.",
}
SMALL_TALK = [
    "The weather was awful on the way to work today.", "I watched a documentary about octopuses.",
    "Work has been really busy this week.", "I finally finished that long novel.",
    "We had a barbecue with the neighbours on Saturday.", "My phone battery dies so fast lately.",
    "I tried a new coffee place near the station.", "The train was late again this morning.",
    "I spent the weekend cleaning the garage.", "I'm thinking about repainting the kitchen.",
    "My knee hurts after yesterday's run.", "I binge-watched a detective series last night.",
]
ASSISTANT = [
    "That sounds great, tell me more.", "Thanks for sharing that!", "How did that make you feel?",
    "Good to know, I'll remember that.", "Interesting! What happened next?",
    "That must have been a lot of work.", "Nice, anything else on your mind today?",
]
UPDATABLE = [a for a, spec in FACTS.items() if spec[1] is not None]


def generate(users: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for u in range(users):
        name = NAMES[u % len(NAMES)]
        out.append(_user(rng, f"syn-{u:02d}", name))
    return out


def _user(rng: random.Random, sample_id: str, name: str) -> dict:
    sessions: list[list[tuple[str, str]]] = [[] for _ in range(6)]  # (speaker, text)
    facts: dict[str, list[tuple[int, str]]] = {}  # attribute -> [(session, value)]
    attrs = list(FACTS)
    rng.shuffle(attrs)
    updated = set(rng.sample([a for a in attrs if a in UPDATABLE], 3))
    for i, attr in enumerate(attrs):
        first, update, _, values = FACTS[attr]
        vals = rng.sample(values, 3)
        s0 = i % 3  # stated in sessions 1-3
        sessions[s0].append((name, first.format(v=vals[0])))
        facts[attr] = [(s0, vals[0])]
        # a distractor with another value of the same kind, in some other session
        sessions[rng.randrange(6)].append((name, DISTRACTORS[attr].format(v=vals[2])))
        if attr in updated:
            s1 = rng.randint(3, 5)
            sessions[s1].append((name, update.format(v=vals[1])))
            facts[attr].append((s1, vals[1]))
    conv: dict = {"speaker_a": name, "speaker_b": "Assistant"}
    start = datetime(2026, 1, 5, 10, 0) + timedelta(days=rng.randrange(60))
    where: dict[tuple[int, str], str] = {}
    for n, turns in enumerate(sessions, 1):
        for _ in range(rng.randint(3, 5)):
            turns.insert(rng.randrange(len(turns) + 1), (name, rng.choice(SMALL_TALK)))
        dialog = []
        for speaker, text in turns:
            dialog.append({"speaker": speaker, "dia_id": f"D{n}:{len(dialog) + 1}", "text": text})
            where[(n - 1, text)] = dialog[-1]["dia_id"]
            dialog.append({"speaker": "Assistant", "dia_id": f"D{n}:{len(dialog) + 1}",
                           "text": rng.choice(ASSISTANT)})
        conv[f"session_{n}"] = dialog
        when = start + timedelta(days=14 * (n - 1))
        conv[f"session_{n}_date_time"] = when.strftime("%I:%M %p on %d %B, %Y").lstrip("0")
    qa = []
    for attr, history in facts.items():
        first, update, question, _ = FACTS[attr]
        said = [where[(s, (first if k == 0 else update).format(v=v))] for k, (s, v) in enumerate(history)]
        qa.append({"question": question.format(name=name), "answer": history[-1][1],
                   "evidence": [said[-1]], "stale": said[:-1],
                   "stale_values": [v for _, v in history[:-1]],
                   "category": 6 if len(history) > 1 else 4})
    return {"sample_id": sample_id, "conversation": conv, "qa": qa}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=10)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--dump", help="also write the generated data set to this file")
    ap.add_argument("--paths", nargs="*", default=["verbatim", "extract"])
    ap.add_argument("--only", nargs="*", default=None, help="rankings (bm25 dense hybrid)")
    ap.add_argument("--json", help="write results to this file")
    args = ap.parse_args()
    import locomo

    data = generate(args.users, args.seed)
    ids = [s["sample_id"] for s in data]
    locomo.HALVES = {"tune": tuple(ids[: len(ids) // 2]), "confirm": tuple(ids[len(ids) // 2:])}
    locomo.CATEGORIES = {4: "static", 6: "current"}
    path = Path(args.dump) if args.dump else Path(tempfile.mkstemp(suffix=".json")[1])
    path.write_text(json.dumps(data, indent=1))
    print(f"{len(data)} users, {sum(len(s['qa']) for s in data)} questions "
          f"({sum(q['category'] == 6 for s in data for q in s['qa'])} after an update); data: {path}",
          file=sys.stderr)
    argv = ["--data", str(path), "--paths", *args.paths]
    if args.only:
        argv += ["--only", *args.only]
    if args.json:
        argv += ["--json", args.json]
    try:
        await locomo.main(argv)
    finally:
        if not args.dump:
            path.unlink(missing_ok=True)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    asyncio.run(main())
