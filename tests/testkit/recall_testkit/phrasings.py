"""Phrasings of everyday facts, written for the rule-based extractor's tests (issue 27).

Written by hand from the inventory (recall_core.kit.attributes), not taken from any benchmark
set. Each entry: a text and the (entity, attribute, value) triples it states, in order
(memories without a triple are not listed). A many-valued attribute is written with its
value key, as stored (`allergies:peanut`); `ENDED` marks an ended value.
"""

from __future__ import annotations

from recall_core.kit.attributes import ENDED

E = ENDED

STATES: list[tuple[str, list[tuple[str, str, str]]]] = [
    # -- employer, however phrased
    ("I work at Acme Corp.", [("user", "employer", "Acme Corp")]),
    ("I just started a new job at Globex.", [("user", "employer", "Globex")]),
    ("I joined Hooli last month.", [("user", "employer", "Hooli")]),
    ("My employer is Initech.", [("user", "employer", "Initech")]),
    ("I'm at Stripe now.", [("user", "employer", "Stripe")]),
    ("I've been working for the Department of Energy since 2019.",
     [("user", "employer", "Department of Energy")]),
    ("I accepted an offer from Shopify.", [("user", "employer", "Shopify")]),
    ("I work at Northwind Traders as a data engineer.",
     [("user", "employer", "Northwind Traders"), ("user", "occupation", "data engineer")]),
    ("I'm a data scientist at Spotify.",
     [("user", "employer", "Spotify"), ("user", "occupation", "data scientist")]),
    # -- occupation
    ("I work as a nurse.", [("user", "occupation", "nurse")]),
    ("I'm a software engineer.", [("user", "occupation", "software engineer")]),
    ("I got promoted to engineering manager.", [("user", "occupation", "engineering manager")]),
    ("My job title is staff engineer.", [("user", "occupation", "staff engineer")]),
    # -- location
    ("I live in Berlin with my wife.", [("user", "location", "Berlin")]),
    ("I moved to Lisbon last year.", [("user", "location", "Lisbon")]),
    ("I'm in Lisbon now.", [("user", "location", "Lisbon")]),
    ("I'm based in NYC.", [("user", "location", "NYC")]),
    ("I relocated to Denver for the job.", [("user", "location", "Denver")]),
    ("I've been living in Paris since 2019.", [("user", "location", "Paris")]),
    ("I'm originally from Porto.", [("user", "hometown", "Porto")]),
    ("I grew up in Toronto.", [("user", "hometown", "Toronto")]),
    # -- identity
    ("My name is Alice Smith.", [("user", "name", "Alice Smith")]),
    ("Call me Bob.", [("user", "name", "Bob")]),
    ("I'm 34 years old.", [("user", "age", "34")]),
    ("I just turned 30.", [("user", "age", "30")]),
    ("My email is alice@example.com.", [("user", "email", "alice@example.com")]),
    ("My pronouns are they/them.", [("user", "pronouns", "they/them")]),
    ("My birthday is March 3rd.", [("user", "birthday", "March 3rd")]),
    ("I'm in the Europe/Berlin timezone.", [("user", "timezone", "Europe/Berlin")]),
    # -- people
    ("My manager is Tomás Ortega.", [("user", "manager", "Tomás Ortega")]),
    ("I report to Dana now.", [("user", "manager", "Dana")]),
    ("Priya is my new manager.", [("user", "manager", "Priya")]),
    ("I'm married to Sam.", [("user", "partner", "Sam")]),
    ("My wife works at Globex.", [("wife", "employer", "Globex")]),
    ("My sister lives in Madrid.", [("sister", "location", "Madrid")]),
    ("Sarah moved to Porto.", [("sarah", "location", "Porto")]),
    ("My boss is vegan.", [("boss", "diet", "vegan")]),
    # -- tools held one at a time
    ("I use vim.", [("user", "editor", "vim")]),
    ("My favourite editor is vim.", [("user", "editor", "vim")]),
    ("These days I use VS Code for everything.", [("user", "editor", "VS Code")]),
    ("I switched to Helix.", [("user", "editor", "Helix")]),
    ("VS Code is my editor now.", [("user", "editor", "VS Code")]),
    ("I switched from Chrome to Brave.", [("user", "browser", "Brave")]),
    ("I run Arch, btw.", [("user", "os", "Arch")]),
    ("I'm on macOS.", [("user", "os", "macOS")]),
    ("I prefer dark mode.", [("user", "theme", "dark mode")]),
    ("I got a Pixel 8.", [("user", "phone", "Pixel 8")]),
    ("I drive a 2015 Honda Civic.", [("user", "car", "2015 Honda Civic")]),
    ("I'm using uv now instead of poetry.", [("user", "python_package_manager", "uv")]),
    # -- diet, habits
    ("I'm vegetarian.", [("user", "diet", "vegetarian")]),
    ("I went vegan last month.", [("user", "diet", "vegan")]),
    ("I wake up at 6am.", [("user", "wake_time", "6am")]),
    ("I bike to work.", [("user", "commute", "bike")]),
    ("I work from home.", [("user", "commute", "from home")]),
    # -- many-valued
    ("I'm allergic to peanuts.", [("user", "allergies:peanut", "peanuts")]),
    ("I have a peanut allergy.", [("user", "allergies:peanut", "peanut")]),
    ("I'm allergic to peanuts and shellfish.",
     [("user", "allergies:peanut", "peanuts"), ("user", "allergies:shellfish", "shellfish")]),
    ("I'm no longer allergic to peanuts.", [("user", "allergies:peanut", E)]),
    ("I love coffee.", [("user", "likes:coffee", "coffee")]),
    ("I also like tea.", [("user", "likes:tea", "tea")]),
    ("I can't stand cilantro.", [("user", "dislikes:cilantro", "cilantro")]),
    ("I don't like coffee.", [("user", "dislikes:coffee", "coffee")]),
    ("I don't like coffee anymore.", [("user", "likes:coffee", E)]),
    ("I speak English, French and German.",
     [("user", "languages_spoken:english", "English"),
      ("user", "languages_spoken:french", "French"),
      ("user", "languages_spoken:german", "German")]),
    ("I have a dog named Rex.", [("user", "pets:rex", "Rex")]),
    ("My dog's name is Biscuit.", [("user", "pets:biscuit", "Biscuit")]),
    ("I play badminton every Thursday.", [("user", "hobbies:badminton", "badminton")]),
    ("I use Docker.", [("user", "uses:docker", "Docker")]),
    ("I don't use Docker anymore.", [("user", "uses:docker", E)]),
    ("I stopped using Docker.", [("user", "uses:docker", E)]),
    ("I also use Neovim.", [("user", "uses:neovim", "Neovim")]),
    ("I code in Rust.", [("user", "uses:rust", "Rust")]),
    # -- a team, a project, a system
    ("We use Postgres for storage.", [("team", "database", "Postgres")]),
    ("We migrated from MySQL to Postgres.", [("team", "database", "Postgres")]),
    ("Our CI runs on GitHub Actions.", [("team", "ci", "GitHub Actions")]),
    ("We track tickets in Linear.", [("team", "issue_tracker", "Linear")]),
    ("We deploy on Fridays.", [("team", "deploy_day", "Fridays")]),
    ("The billing service uses Postgres.", [("billing service", "database", "Postgres")]),
    ("Our backend is written in Go.", [("backend", "language", "Go")]),
    ("We'll go with FastAPI.", [("team", "framework", "FastAPI")]),
    ("We use Postgres and Redis.",   # tools used side by side
     [("team", "uses:postgres", "Postgres"), ("team", "uses:redis", "Redis")]),
    # -- speakers
    ("Caroline: I live in Boston.", [("caroline", "location", "Boston")]),
    ("Caroline: My husband works at Globex.", [("caroline's husband", "employer", "Globex")]),
]

NO_FACT = [
    "I don't use vim anymore.",        # which editor now is unknown: don't end the fact
    "I used to live in Rome.",         # past
    "I no longer live in Rome.",
    "I'm not based in Oslo.",
    "I might move to Berlin next year.",
    "I'm thinking about joining Globex.",
    "Should I move to Porto?",
    "I run marathons.",                # "run" only counts for known tools
    "I joined the gym.",
    "I moved to a bigger flat.",
    "I'd like a summary.",             # a request, not a taste
    "My name is not important.",
    "The deploy broke on Friday.",
    "I use it every day.",             # vague value
    "I went to a support group yesterday and it was so powerful.",
    "I'm in a meeting.",
    "I'm in London for a conference.",
    "I'm Italian.",
]
