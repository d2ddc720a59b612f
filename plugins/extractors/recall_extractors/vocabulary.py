"""Canonical (entity, attribute, value) triples, shared by every extractor.

The service supersedes an active memory when a new one has the same (entity, attribute) and a
different value. So the spelling of entity and attribute is a contract: "I use vim" and later
"I switched to VS Code" must land on the same key, while "I use Docker" and "I use Firefox" must
not. The rules:

* entity and attribute are lowercase, whitespace-collapsed; attributes are snake_case
  (`favorite_color`, `dog_name`) with British spellings folded (`favourite` -> `favorite`);
* the speaker is entity ``user``; "we"/"our team"/"our company" is entity ``team``;
* a tool that is normally used one at a time (editor, os, shell, browser, terminal, ...) is keyed
  by its category (`editor`), so a new one replaces the old;
* any other "uses X" is keyed per tool (`uses:docker`), so it never collides with another tool;
* the value is kept as written (trimmed).
"""

from __future__ import annotations

import re
import unicodedata

USER = "user"
TEAM = "team"

# Categories whose members replace each other in practice: one editor, one shell, one OS at a
# time. Languages and databases are deliberately absent: people use several at once, and a
# wrong supersession loses a true memory, which is worse than keeping a stale one.
EXCLUSIVE_CATEGORIES: dict[str, tuple[str, ...]] = {
    "editor": (
        "vim", "neovim", "nvim", "emacs", "spacemacs", "doom emacs", "vs code", "vscode",
        "visual studio code", "vscodium", "sublime", "sublime text", "intellij",
        "intellij idea", "pycharm", "webstorm", "goland", "clion", "rider", "phpstorm",
        "rubymine", "atom", "nano", "helix", "zed", "cursor", "windsurf", "xcode",
        "android studio", "notepad++", "eclipse", "kakoune", "visual studio", "textmate",
        "bbedit", "fleet", "micro", "jetbrains",
    ),
    "os": (
        "linux", "ubuntu", "debian", "fedora", "arch", "arch linux", "macos", "mac os",
        "mac", "osx", "os x", "windows", "nixos", "freebsd", "openbsd", "linux mint", "mint",
        "manjaro", "pop!_os", "pop os", "popos", "gentoo", "opensuse", "centos", "rhel",
        "chromeos", "chrome os", "wsl",
    ),
    "shell": ("bash", "zsh", "fish", "nushell", "nu", "powershell", "pwsh", "tcsh", "ksh",
              "oh my zsh", "xonsh", "elvish"),
    "browser": ("chrome", "google chrome", "firefox", "safari", "edge", "microsoft edge",
                "brave", "arc", "vivaldi", "opera", "chromium", "librewolf", "zen"),
    "terminal": ("iterm", "iterm2", "alacritty", "kitty", "wezterm", "ghostty", "warp",
                 "windows terminal", "gnome terminal", "konsole", "hyper", "terminal.app",
                 "tilix"),
    "terminal_multiplexer": ("tmux", "screen", "gnu screen", "zellij", "byobu"),
    "python_package_manager": ("pip", "poetry", "uv", "pipenv", "conda", "mamba", "pdm",
                               "hatch", "rye", "pixi"),
    "js_package_manager": ("npm", "yarn", "pnpm"),
    "keyboard_layout": ("dvorak", "colemak", "colemak-dh", "qwerty", "qwertz", "azerty",
                        "workman"),
    "notes_app": ("obsidian", "notion", "logseq", "evernote", "bear", "roam", "roam research",
                  "apple notes", "onenote", "joplin", "org mode", "org-mode"),
    "password_manager": ("1password", "bitwarden", "lastpass", "keepass", "keepassxc",
                         "dashlane", "proton pass"),
    "theme": ("dark mode", "light mode", "dark theme", "light theme"),
}

CATEGORY_OF: dict[str, str] = {
    member: category for category, members in EXCLUSIVE_CATEGORIES.items() for member in members
}

# "I use vim for editing": a purpose that names one of the categories above.
PURPOSE_ALIASES: dict[str, str] = {
    "editing": "editor", "code editing": "editor", "text editing": "editor",
    "editing code": "editor", "editor": "editor", "my editor": "editor",
    "notes": "notes_app", "note-taking": "notes_app", "note taking": "notes_app",
    "taking notes": "notes_app", "browsing": "browser", "web browsing": "browser",
    "passwords": "password_manager", "password management": "password_manager",
}

# Trailing generic nouns that don't change what tool is meant ("the Firefox browser").
_GENERIC_SUFFIXES = ("browser", "editor", "text editor", "ide", "shell", "terminal",
                     "os", "operating system", "app", "distro", "emulator")

_ENTITY_ALIASES: dict[str, str] = {
    "i": USER, "me": USER, "my": USER, "myself": USER, "the user": USER, "user": USER,
    "the speaker": USER, "speaker": USER, "users": USER,
    "we": TEAM, "us": TEAM, "our": TEAM, "our team": TEAM, "my team": TEAM,
    "the team": TEAM, "team": TEAM, "our company": TEAM, "we (the team)": TEAM,
}

# Attributes a model might use for "uses X": folded into the category/per-tool keys.
_GENERIC_USE_ATTRIBUTES = {"uses", "use", "using", "tool", "tools", "software", "app",
                           "application", "uses_tool", "tool_used", "technology", "tech"}

_BRITISH = {"favourite": "favorite", "favourites": "favorites", "colour": "color",
            "colours": "colors", "organisation": "organization", "centre": "center"}

_ARTICLE = re.compile(r"^(?:the|a|an|my|our)\s+", re.IGNORECASE)
_VERSION = re.compile(r"\s*v?\d+(?:\.\d+)*[a-z]?$")


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    return re.sub(r"\s+", " ", text).strip()


def canonical_entity(entity: str) -> str:
    """`user` for the speaker, `team` for "we", else the lowercased name."""
    key = _fold(entity).lower().strip(" .,:;!?\"'`")
    return _ENTITY_ALIASES.get(key, key)


def canonical_key(text: str) -> str:
    """snake_case key: lowercase, British spellings folded, possessive 's dropped, separators
    collapsed. Keeps `:` (namespaced keys), `+`, `#` and `.` (c++, c#, node.js)."""
    text = _fold(text).lower().replace("'s ", " ").replace("'s_", "_")
    if text.endswith("'s"):
        text = text[:-2]
    words = [_BRITISH.get(w, w) for w in re.split(r"[\s_\-]+", text)]
    key = re.sub(r"[^a-z0-9:+#.]+", "_", "_".join(words))
    return re.sub(r"_+", "_", key).strip("_.")


def tool_name(value: str) -> str:
    """The lookup form of a tool: no article, no version number, no generic suffix."""
    name = _fold(value).lower().strip(" .,!?\"'`")
    name = _ARTICLE.sub("", name)
    for suffix in _GENERIC_SUFFIXES:
        if name.endswith(" " + suffix):
            name = name[: -len(suffix) - 1]
            break
    return _VERSION.sub("", name).strip()


def category_of(value: str) -> str | None:
    """The exclusive category of a tool name (`editor` for "VS Code"), or None."""
    return CATEGORY_OF.get(tool_name(value))


def uses_attribute(value: str, *, additive: bool = False) -> str:
    """Attribute for "<subject> uses <value>": the category when the tool is exclusive (and the
    sentence doesn't say "also"), else a per-tool key that can't collide with another tool."""
    category = None if additive else category_of(value)
    return category or f"uses:{canonical_key(tool_name(value))}"


def purpose_attribute(purpose: str) -> str:
    """Attribute for "<subject> uses X for <purpose>"."""
    cleaned = _ARTICLE.sub("", _fold(purpose).lower()).strip(" .,!?")
    cleaned = re.sub(r"^(?:all|everything|most)\s+(?:of\s+)?(?:our|my|the)?\s*", "", cleaned)
    return PURPOSE_ALIASES.get(cleaned) or canonical_key(cleaned)


def clean_value(value: str) -> str:
    """The value as written, minus surrounding quotes, a leading article and end punctuation."""
    value = _fold(value).strip(" \t\"'`*_")
    value = re.sub(r"[.!?,;:]+$", "", value).strip(" \"'`")
    return _ARTICLE.sub("", value) if len(value.split()) > 1 else value


def canonical_triple(entity: str | None, attribute: str | None, value: str | None
                     ) -> tuple[str, str, str] | None:
    """Normalise a triple from any source (the stub's rules or a model's tool call).

    Returns None unless all three parts are present and non-blank: a partial triple cannot
    take part in supersession and would only mislead.
    """
    if not entity or not attribute or value is None:
        return None
    value = clean_value(str(value))
    ent = canonical_entity(str(entity))
    attr = canonical_key(str(attribute))
    if not ent or not attr or not value:
        return None
    if attr in _GENERIC_USE_ATTRIBUTES:
        attr = uses_attribute(value)
    return ent, attr, value
