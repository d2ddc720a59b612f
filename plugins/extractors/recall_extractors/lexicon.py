"""What a named thing is: the categories the rules (and a model's generic "uses") key by.

"I use vim" and later "These days I use VS Code" are one fact (the editor) only because vim
and VS Code are both editors; "I use Docker" and "I use Firefox" must stay two. So a value's
category decides its attribute (an inventory name, `recall_core.kit.attributes`):

* `category_of("VS Code") == "editor"`; unknown names have no category;
* a category is *exclusive* for a person (one editor, one phone, one car at a time) or only
  for a team or system (one main database, one CI); `attribute_for` says which key a
  statement "<subject> uses <value>" gets: the category when it is exclusive for that kind of
  subject and the statement does not say "also", else `uses:<tool>` (many-valued: never
  colliding with another tool).

Languages and databases are exclusive for a project (its main one) but not for a person, who
knows several: a wrong supersession loses a true memory, which is worse than a stale one.
"""

from __future__ import annotations

import re

from recall_core.kit.attributes import INVENTORY, canonical_attribute, canonical_key

from .sentences import fold

# category -> members (lowercase, as people write them)
_MEMBERS: dict[str, tuple[str, ...]] = {
    "editor": (
        "vim", "neovim", "nvim", "emacs", "spacemacs", "doom emacs", "vs code", "vscode",
        "visual studio code", "vscodium", "sublime", "sublime text", "intellij",
        "intellij idea", "pycharm", "webstorm", "goland", "clion", "rider", "phpstorm",
        "rubymine", "atom", "nano", "helix", "zed", "cursor", "windsurf", "xcode",
        "android studio", "notepad++", "eclipse", "kakoune", "visual studio", "textmate",
        "bbedit", "fleet", "jetbrains", "lazyvim"),
    "os": (
        "linux", "ubuntu", "debian", "fedora", "arch", "arch linux", "macos", "mac os",
        "mac", "osx", "os x", "windows", "windows 10", "windows 11", "nixos", "freebsd",
        "openbsd", "linux mint", "mint", "manjaro", "pop!_os", "pop os", "popos", "gentoo",
        "opensuse", "centos", "rhel", "chromeos", "chrome os", "wsl", "elementary os"),
    "shell": ("bash", "zsh", "fish", "nushell", "nu", "powershell", "pwsh", "tcsh", "ksh",
              "oh my zsh", "xonsh", "elvish"),
    "browser": ("chrome", "google chrome", "firefox", "safari", "edge", "microsoft edge",
                "brave", "arc", "vivaldi", "opera", "chromium", "librewolf", "zen",
                "firefox developer edition", "duckduckgo browser"),
    "terminal": ("iterm", "iterm2", "alacritty", "kitty", "wezterm", "ghostty", "warp",
                 "windows terminal", "gnome terminal", "konsole", "hyper", "terminal.app",
                 "tilix", "foot"),
    "terminal_multiplexer": ("tmux", "screen", "gnu screen", "zellij", "byobu"),
    "python_package_manager": ("pip", "poetry", "uv", "pipenv", "conda", "mamba", "pdm",
                               "hatch", "rye", "pixi"),
    "js_package_manager": ("npm", "yarn", "pnpm", "bun"),
    "keyboard_layout": ("dvorak", "colemak", "colemak-dh", "qwerty", "qwertz", "azerty",
                        "workman"),
    "notes_app": ("obsidian", "notion", "logseq", "evernote", "bear", "roam", "roam research",
                  "apple notes", "onenote", "joplin", "org mode", "org-mode", "craft",
                  "simplenote", "google keep"),
    # (not an inventory row: the row's prompt line tipped the CI's 135M model into replies
    # that ran to the output budget; a name not in the inventory is single-valued all the same)
    "music_service": ("spotify", "apple music", "tidal", "youtube music", "deezer",
                      "amazon music", "pandora", "soundcloud", "qobuz"),
    "password_manager": ("1password", "bitwarden", "lastpass", "keepass", "keepassxc",
                         "dashlane", "proton pass", "keeper"),
    "theme": ("dark mode", "light mode", "dark theme", "light theme", "solarized",
              "solarized dark", "solarized light", "gruvbox", "dracula", "nord", "monokai",
              "one dark", "catppuccin", "tokyo night", "github dark", "github light",
              "high contrast", "rose pine", "everforest", "ayu"),
    "phone": ("iphone", "pixel", "google pixel", "galaxy", "samsung galaxy", "oneplus",
              "fairphone", "android phone", "xperia", "moto", "motorola", "nokia",
              "huawei", "xiaomi", "nothing phone", "blackberry", "redmi", "oppo", "realme",
              "zenfone", "alcatel", "doro", "galaxy s", "galaxy a", "galaxy z fold",
              "galaxy z flip", "moto g", "motorola razr"),
    "laptop": ("macbook", "macbook pro", "macbook air", "thinkpad", "xps", "dell xps",
               "surface", "surface laptop", "framework laptop", "chromebook", "zenbook",
               "spectre", "razer blade", "mac mini", "imac", "mac studio",
               # the makers' laptop lines, named with their maker or alone where the line's
               # name is no common word ("Inspiron", not "Yoga" or "Swift")
               "dell inspiron", "inspiron", "dell latitude", "dell precision", "alienware",
               "lenovo thinkpad", "lenovo ideapad", "ideapad", "lenovo yoga", "lenovo legion",
               "thinkbook", "hp spectre", "hp envy", "hp pavilion", "hp elitebook", "elitebook",
               "hp omen", "hp laptop", "dell laptop", "lenovo laptop", "asus laptop",
               "acer laptop", "asus zenbook", "asus vivobook", "vivobook", "asus rog",
               "rog zephyrus", "acer aspire", "acer swift", "acer nitro", "acer predator",
               "microsoft surface", "surface pro", "surface book", "galaxy book"),
    "car": ("toyota", "honda", "tesla", "ford", "bmw", "volvo", "audi", "volkswagen", "vw",
            "subaru", "kia", "hyundai", "mazda", "nissan", "chevy", "chevrolet", "jeep",
            "mercedes", "porsche", "fiat", "peugeot", "renault", "skoda", "prius", "civic",
            "corolla", "golf", "polestar", "rivian", "mini cooper", "lexus", "dacia", "seat",
            "citroen", "opel", "jaguar", "land rover", "range rover", "model 3", "model y",
            "leaf", "camry", "outback", "f-150"),
    # -- the providers a person uses. Names that are also common words ("Three", "Orange",
    # "Sky", "Mint", "Visible", "Bell", "the Y") are left out: a wrong category is worse than
    # none. So are names that are an employer as often as a provider ("Kaiser").
    "bank": ("chase", "chase bank", "jpmorgan chase", "bank of america", "bofa", "wells fargo",
             "citi", "citibank", "capital one", "us bank", "u.s. bank", "pnc", "td bank",
             "truist", "ally", "ally bank", "chime", "sofi", "schwab", "charles schwab", "usaa",
             "navy federal", "monzo", "revolut", "starling", "starling bank", "n26",
             "barclays", "hsbc", "lloyds", "natwest", "santander", "halifax", "nationwide",
             "tsb", "metro bank", "first direct", "rbc", "scotiabank", "bmo", "cibc",
             "commbank", "commonwealth bank", "westpac", "anz", "ing", "deutsche bank", "bunq",
             "discover bank", "fifth third", "regions bank", "citizens bank", "santander bank"),
    "mobile_carrier": (
        "verizon", "at&t", "t-mobile", "tmobile", "t mobile", "sprint", "mint mobile",
        "google fi", "cricket", "cricket wireless", "metro by t-mobile", "metropcs",
        "boost mobile", "us cellular", "straight talk", "ting", "us mobile", "xfinity mobile",
        "spectrum mobile", "visible wireless", "vodafone", "ee", "o2", "giffgaff", "lebara",
        "lycamobile", "lyca mobile", "tesco mobile", "sky mobile", "virgin mobile", "telstra",
        "optus", "rogers", "telus", "fido", "freedom mobile", "koodo", "movistar",
        "deutsche telekom", "telekom", "swisscom", "jio", "airtel", "three mobile", "smarty",
        "voxi", "id mobile"),
    "internet_provider": (
        "comcast", "xfinity", "spectrum", "cox", "verizon fios", "fios", "at&t fiber",
        "google fiber", "starlink", "frontier", "centurylink", "optimum", "rcn", "sonic",
        "bt", "bt broadband", "sky broadband", "virgin media", "talktalk", "plusnet",
        "hyperoptic", "community fibre", "vodafone broadband", "ziply", "wow"),
    "gym": ("planet fitness", "equinox", "24 hour fitness", "la fitness", "anytime fitness",
            "gold's gym", "golds gym", "crunch", "crunch fitness", "orangetheory",
            "orange theory", "ymca", "the ymca", "puregym", "pure gym", "the gym group",
            "virgin active", "david lloyd", "life time", "lifetime fitness", "f45",
            "snap fitness", "blink fitness", "fitness first", "gymbox", "third space",
            "bay club", "24 hour", "pure barre", "barry's", "barrys", "soulcycle",
            "movement climbing", "the edge climbing"),
    "health_insurance": ("aetna", "cigna", "unitedhealthcare", "united healthcare", "uhc",
                         "humana", "blue cross", "blue cross blue shield", "bcbs", "anthem",
                         "oscar health", "bupa", "kaiser permanente", "ambetter",
                         "molina", "medicaid", "medicare", "tricare", "axa health",
                         "vitality health", "highmark", "premera", "regence", "florida blue",
                         "empire blue cross", "carefirst"),
    "car_insurance": ("geico", "progressive", "state farm", "allstate", "liberty mutual",
                      "farmers", "farmers insurance", "esurance", "root insurance", "admiral",
                      "direct line", "aviva", "churchill", "the general", "travelers",
                      "mercury insurance", "erie insurance", "lemonade car", "hastings direct",
                      "lv=", "more than", "sheilas' wheels"),
    # the shops and carriers one uses habitually: named alone they say nothing; a frame of
    # habit reads them ("I ship all my orders with Evri", "I get my prescriptions at Boots")
    "shipping_carrier": ("ups", "usps", "fedex", "dhl", "dpd", "evri", "hermes", "royal mail",
                         "parcelforce", "yodel", "canada post", "australia post", "purolator",
                         "inpost", "ontrac", "gls", "aramex", "blue dart", "delhivery"),
    "pharmacy": ("cvs", "cvs pharmacy", "walgreens", "rite aid", "boots", "boots pharmacy",
                 "superdrug", "lloyds pharmacy", "well pharmacy", "walmart pharmacy",
                 "costco pharmacy", "shoppers drug mart", "chemist warehouse", "priceline",
                 "apollo pharmacy", "asda pharmacy", "rowlands pharmacy"),
    "grocery_store": ("kroger", "aldi", "lidl", "tesco", "sainsbury's", "sainsburys", "asda",
                      "morrisons", "waitrose", "trader joe's", "trader joes", "whole foods",
                      "safeway", "publix", "wegmans", "h-e-b", "heb", "costco", "ocado",
                      "sprouts", "food lion", "giant eagle", "albertsons", "woolworths",
                      "coles", "big bazaar", "dmart", "reliance fresh", "loblaws",
                      "sobeys", "iceland", "m&s food"),
    "airline": ("delta", "american airlines", "southwest", "jetblue", "alaska airlines",
                "british airways", "easyjet", "ryanair", "lufthansa", "emirates", "qantas",
                "air canada", "klm", "air france", "indigo", "air india", "virgin atlantic",
                "united airlines", "spirit airlines", "frontier airlines", "wizz air",
                "qatar airways", "singapore airlines", "cathay pacific", "turkish airlines"),
    # -- a team's or system's stack
    "language": ("python", "go", "golang", "rust", "java", "javascript", "typescript",
                 "kotlin", "swift", "c", "c++", "c#", "ruby", "php", "scala", "elixir",
                 "erlang", "haskell", "clojure", "dart", "julia", "r", "perl", "lua", "zig",
                 "ocaml", "f#", "objective-c", "nim", "crystal", "sql"),
    "framework": ("django", "flask", "fastapi", "rails", "ruby on rails", "express",
                  "express.js", "spring", "spring boot", "laravel", "phoenix", "nestjs",
                  "asp.net", ".net", "gin", "fiber", "actix", "axum", "sinatra",
                  "koa", "hapi", "symfony", "quarkus", "micronaut", "litestar", "starlette",
                  "flutter", "react native", "swiftui", "jetpack compose", "expo", "ionic",
                  "electron", "tauri"),
    "frontend_framework": ("react", "vue", "vue.js", "svelte", "sveltekit", "angular",
                           "next.js", "nextjs", "nuxt", "remix", "solid", "solidjs",
                           "ember", "astro", "htmx", "qwik", "preact", "gatsby"),
    "database": ("postgres", "postgresql", "mysql", "mariadb", "sqlite", "mongodb", "mongo",
                 "dynamodb", "cassandra", "cockroachdb", "oracle", "sql server", "mssql",
                 "supabase", "firestore", "couchdb", "neo4j", "clickhouse", "snowflake",
                 "bigquery", "timescaledb", "planetscale", "aurora", "redshift", "duckdb",
                 "elasticsearch", "opensearch", "meilisearch", "typesense", "solr"),
    "orm": ("sqlalchemy", "prisma", "hibernate", "typeorm", "sequelize", "drizzle",
            "active record", "activerecord", "gorm", "django orm", "entity framework",
            "diesel", "peewee", "sqlmodel", "jooq", "mybatis", "ecto", "knex", "kysely"),
    "ci": ("github actions", "gitlab ci", "circleci", "circle ci", "jenkins", "travis",
           "travis ci", "buildkite", "teamcity", "drone", "azure pipelines", "bitbucket pipelines",
           "argo workflows", "concourse", "woodpecker"),
    "cloud": ("aws", "amazon web services", "gcp", "google cloud", "azure", "heroku",
              "digitalocean", "digital ocean", "fly.io", "vercel", "netlify", "render",
              "linode", "hetzner", "cloudflare", "ovh", "railway", "oracle cloud"),
    "issue_tracker": ("jira", "linear", "github issues", "gitlab issues", "asana", "trello",
                      "youtrack", "shortcut", "clubhouse", "clickup", "pivotal tracker",
                      "redmine", "basecamp"),
    "chat_tool": ("slack", "microsoft teams", "teams", "discord", "mattermost", "zulip",
                  "rocket.chat", "google chat", "element", "matrix"),
    "code_host": ("github", "gitlab", "bitbucket", "codeberg", "gitea", "sourcehut",
                  "azure repos"),
    "testing_framework": ("pytest", "unittest", "jest", "vitest", "mocha", "jasmine",
                          "junit", "rspec", "minitest", "cypress", "playwright", "selenium",
                          "testng", "phpunit", "karma", "ava", "nose", "hypothesis"),
    "monitoring": ("datadog", "grafana", "prometheus", "new relic", "sentry", "honeycomb",
                   "splunk", "dynatrace", "pagerduty", "opsgenie", "elastic apm",
                   "signoz", "appsignal", "rollbar", "bugsnag", "loki"),
    "auth_provider": ("auth0", "okta", "cognito", "keycloak", "firebase auth", "clerk",
                      "supabase auth", "azure ad", "entra id", "workos", "ory"),
    "branch_strategy": ("trunk-based development", "trunk based development", "gitflow",
                        "git flow", "github flow", "gitlab flow"),
}

CATEGORY_OF: dict[str, str] = {m: c for c, ms in _MEMBERS.items() for m in ms}
#: Every attribute a named tool can be the value of.
TOOL_CATEGORIES: frozenset[str] = frozenset(set(_MEMBERS) | {"package_manager"})
#: Categories a person has one of at a time (editor, phone, car...). The rest (a project's
#: language or database...) are one at a time only for a team, project or system.
PERSONAL: frozenset[str] = frozenset({
    "editor", "os", "shell", "browser", "terminal", "terminal_multiplexer",
    "python_package_manager", "js_package_manager", "keyboard_layout", "notes_app",
    "password_manager", "music_service", "theme", "phone", "laptop", "car", "bank",
    "mobile_carrier",
    "internet_provider", "gym", "health_insurance", "car_insurance", "shipping_carrier",
    "pharmacy", "grocery_store", "airline"})
#: Provider names that are also first names: a person when a sentence opens with one ("Chase
#: moved to Denver"), a bank when one is a customer of it.
FIRST_NAMES_TOO: frozenset[str] = frozenset({"chase", "ally"})
#: Names that are also everyday words, far more often meant as the word ("docs go to him
#: now", "moved to search this sprint"): said in lower case and found by name alone,
#: anywhere in a statement, they name nothing; a frame that expects the kind still reads
#: them ("written in go"). (A longer list cost lower-case tools said in passing: "filed the
#: bug in linear like always".)
WORDS_TOO: frozenset[str] = frozenset({"go", "sprint", "boots", "delta", "iceland", "gls"})
#: Providers: a company a person is a customer of, never their employer or school unless a
#: word of work says so ("I'm with Verizon", "I go to Planet Fitness", "joined Equinox").
#: (Not a carrier or an airline: one drives for FedEx or flies for Delta as their job.)
PROVIDERS: frozenset[str] = frozenset({"bank", "mobile_carrier", "internet_provider", "gym",
                                       "health_insurance", "car_insurance", "pharmacy",
                                       "grocery_store"})

#: Languages people speak (not programming languages): "answer in Dutch", "my Arabic is gone".
NATURAL_LANGUAGES: frozenset[str] = frozenset("""
english spanish french german portuguese dutch italian japanese chinese mandarin cantonese
korean russian polish swedish norwegian danish finnish greek turkish arabic hebrew hindi
bengali urdu vietnamese thai indonesian malay tagalog ukrainian czech hungarian romanian
catalan basque galician irish welsh swahili persian farsi
""".split())

# "I use vim for editing": a purpose that names a category.
_PURPOSES: dict[str, str] = {
    "editing": "editor", "code editing": "editor", "text editing": "editor",
    "editing code": "editor", "coding": "editor", "my editor": "editor",
    "notes": "notes_app", "note-taking": "notes_app", "note taking": "notes_app",
    "taking notes": "notes_app", "browsing": "browser", "web browsing": "browser",
    "passwords": "password_manager", "password management": "password_manager",
    "storage": "database", "persistence": "database", "the database": "database",
    "data": "database", "our data": "database",
    "tickets": "issue_tracker", "issues": "issue_tracker", "issue tracking": "issue_tracker",
    "bug tracking": "issue_tracker", "project management": "issue_tracker",
    "tasks": "issue_tracker", "task tracking": "issue_tracker", "bugs": "issue_tracker",
    "ci": "ci", "ci/cd": "ci", "builds": "ci", "continuous integration": "ci",
    "chat": "chat_tool", "team chat": "chat_tool", "communication": "chat_tool",
    "messaging": "chat_tool", "hosting": "cloud", "deployment": "cloud", "deploys": "cloud",
    "tests": "testing_framework", "testing": "testing_framework",
    "unit tests": "testing_framework", "e2e tests": "testing_framework",
    "end-to-end tests": "testing_framework", "monitoring": "monitoring",
    "observability": "monitoring", "alerting": "monitoring", "error tracking": "monitoring",
    "errors": "monitoring", "metrics": "monitoring", "auth": "auth_provider",
    "authentication": "auth_provider", "login": "auth_provider", "sign-in": "auth_provider",
    "sso": "auth_provider", "the ui": "frontend_framework", "ui": "frontend_framework",
    "version control": "code_host", "source control": "code_host", "code": "code_host",
    "our code": "code_host", "code hosting": "code_host", "our repos": "code_host",
    "packages": "package_manager", "dependencies": "package_manager",
    "dependency management": "package_manager", "installs": "package_manager",
}

# Trailing generic nouns that don't change what tool is meant ("the Firefox browser").
_GENERIC_SUFFIXES = ("browser", "editor", "text editor", "ide", "shell", "terminal",
                     "os", "operating system", "app", "distro", "emulator", "phone",
                     "laptop", "database", "db", "car")
# ... and what a tool runs as, said after its name: no part of the value ("one big Postgres
# 15 instance"), but a name of its own where said alone ("our Discord server" is Discord
# only once a frame has read it as a tool's value: `named`).
_CONTAINERS = ("instance", "server", "cluster", "setup", "install", "box", "account",
               "workspace", "org", "organization")
# Words before a name that say how big, old, worn or whose it is, not which it is ("this beat
# up Jeep Wrangler", "one big Postgres instance", "the company GitHub").
_DESCRIPTIVE = (r"(?:the|a|an|my|our|this|that|one|some|new|brand new|shiny new|used|old|"
                r"big|huge|massive|giant|little|small|tiny|single|trusty|ancient|beat up|"
                r"beat-up|battered|cheap|crappy|shiny|second-hand|secondhand|refurbished|"
                r"same|whole|entire|company|work|personal|self-hosted|managed)")
_ARTICLE = re.compile(r"^" + _DESCRIPTIVE + r"\s+")
_VERSION = re.compile(r"\s*v?\d+(?:\.\d+)*[a-z]?$")
_MODELLED = frozenset({"phone", "laptop", "car", "os"})
_MODEL_TAIL = re.compile(r"\s+(?:\d+\w*|pro|max|plus|mini|ultra|air|se|lite)(?:\s.*)?$")


def tool_name(value: str) -> str:
    """The lookup form of a tool: no article or descriptive word before it, no version
    number, no generic suffix (a name the lexicon knows whole keeps its words: "New Relic",
    "SQL Server", "Windows Terminal")."""
    name = fold(value).lower().strip(" .,!?\"'`")
    for _ in range(4):
        if name in CATEGORY_OF or not _ARTICLE.match(name):
            break
        name = _ARTICLE.sub("", name)
    if name in CATEGORY_OF:
        return name
    for suffix in _GENERIC_SUFFIXES:
        if name.endswith(" " + suffix):
            name = name[: -len(suffix) - 1]
            break
    return _VERSION.sub("", name).strip()


def named(value: str) -> str:
    """The words of a value that name the tool, as written: "one big Postgres 15 instance" ->
    "Postgres 15", "this beat up Jeep Wrangler" -> "Jeep Wrangler"; the value itself when
    the lexicon knows no tool in it."""
    words = value
    for _ in range(4):
        m = re.match(_ARTICLE.pattern, words, re.IGNORECASE)
        if not m or fold(words).lower() in CATEGORY_OF or not words[m.end():].strip():
            break
        words = words[m.end():]
    parts = words.split()
    for suffix in _GENERIC_SUFFIXES + _CONTAINERS:
        n = len(suffix.split())
        if len(parts) > n and " ".join(parts[-n:]).lower() == suffix and \
                category_of(" ".join(parts[:-n])):
            parts = parts[:-n]
            break
    found = " ".join(parts)
    return found if category_of(found) else value


_OTHER_DEVICE = re.compile(r"\b(?:watch|buds|earbuds|tab|tablet|band|pen|charger|case|"
                           r"keyboard|mouse|dock|headphones|earphones|speaker|tv)\b")


def other_device(words: list[str]) -> bool:
    """The word after a brand names another of its things ("my Galaxy Watch")."""
    return bool(words) and bool(_OTHER_DEVICE.fullmatch(words[0].lower().strip(".,!?")))


def category_of(value: str) -> str | None:
    """The category of a named thing ("VS Code" -> editor, "a 2015 Honda Civic" -> car,
    "iPhone 15 Pro" -> phone), or None."""
    name = tool_name(value)
    if name in CATEGORY_OF:
        return CATEGORY_OF[name]
    # a year or a chip before the model ("a 2019 Civic", "an M2 MacBook Air") names no brand
    words = [w for w in name.split() if not re.fullmatch(r"(?:19|20)\d\d", w)]
    if len(words) > 1 and re.fullmatch(r"m\d(?:\s?(?:pro|max))?", words[0]):
        words = words[1:]
    # Brand + model ("Honda Civic", "Pixel 8", "MacBook Pro M3"): for things sold as models,
    # the brand or its first two words decide. Not for tools: "a screen reader" is no tmux.
    if _OTHER_DEVICE.search(" ".join(words[1:])):
        return None  # "Galaxy Watch", "Pixel Buds", "Surface Pen": the brand's other things
    for n in (2, 1):
        head = " ".join(words[:n])
        if len(words) > n and CATEGORY_OF.get(head) in _MODELLED:
            return CATEGORY_OF[head]
    short = _MODEL_TAIL.sub("", " ".join(words))
    return CATEGORY_OF.get(short) if CATEGORY_OF.get(short) in _MODELLED else None


def purpose_attribute(purpose: str) -> str | None:
    """Attribute for "<subject> uses X for <purpose>" ("for CI" -> ci, "for tickets" ->
    issue_tracker), or None when the purpose names no attribute of the inventory ("for my
    side projects")."""
    cleaned = _ARTICLE.sub("", fold(purpose).lower()).strip(" .,!?")
    cleaned = re.sub(r"^(?:all|everything|most)\s+(?:of\s+)?(?:our|my|the)?\s*", "", cleaned)
    found = _PURPOSES.get(cleaned) or canonical_attribute(cleaned)
    return found if found in INVENTORY else None


def attribute_for(value: str, *, person: bool, additive: bool = False) -> str:
    """The attribute of "<subject> uses <value>": the value's category when one is held at a
    time by that kind of subject (and "also" was not said), else the many-valued `uses`."""
    category = category_of(value)
    if category and not additive and (category in PERSONAL or not person):
        if not person and category.endswith("_package_manager"):
            return "package_manager"  # a project has one, whatever its language
        return category
    return "uses"


def uses_key(value: str) -> str:
    """The per-tool spelling of a `uses` value (no version, no generic suffix)."""
    return canonical_key(tool_name(value))
