"""Sentence splitting and chit-chat detection for the rule-based extractor."""

from __future__ import annotations

import functools
import re
import unicodedata

# Abbreviations whose trailing dot does not end a sentence.
_ABBREVIATIONS = {
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "inc",
    "ltd", "co", "corp", "approx", "fig", "cf", "al", "dept", "jan", "feb", "mar",
    "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "a.m", "p.m",
}

# A list marker at the start of a line: "- ", "* ", "• ", "1. ", "2) ".
_BULLET = re.compile(r"^\s*(?:[-*\u2022]+|\d{1,3}[.)])\s+")
# Candidate sentence ends: terminal punctuation (with closing quotes/brackets) then space.
# An emoji ends a sentence as "!" does ("promoted to senior analyst friday 🎉 need a ...").
_END = re.compile(r"([.!?\u2026]+|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+)([\"')\]]*)\s+")

# Words that carry no memory on their own: greetings, thanks, acknowledgements, laughter,
# and the function words that glue them together. A sentence made only of these is chit-chat.
_FILLER = set("""
hi hello hey heya hiya yo howdy greetings morning evening afternoon night good gm gn
thanks thank thx ty tysm thankyou cheers appreciate appreciated
ok okay okey k kk alright allright fine sure yes yeah yep yup ya yea no nope nah
lol lmao rofl haha hahaha hehe heh xd omg wow oh ah ahh aha hmm hm mhm uh um umm oops
cool great nice awesome perfect wonderful amazing excellent brilliant neat sweet lovely
bye goodbye cya later ttyl see soon take care
got gotcha understood understand agree agreed exactly indeed true right correct
sounds seems looks makes sense np problem worries welcome please pls plz
much lot lots very so really too again all bunch tons
how are you doing going what's whats sup up hows how's
i'm im i me my mine you your you're youre yours it it's its that that's thats this
is am are was were be been a an the and or but of to for too as well just well also
there here guys everyone folks man dude bro mate buddy pal friend
will do done let's lets go know think guess mean feel suppose
i've i'd i'll ive been thinking wondering help helps helped helpful works worked useful
""".split())

_WORD = re.compile(r"[a-z0-9']+")


def _is_abbreviation(chunk: str) -> bool:
    # Single-letter initials are not treated as abbreviations: "I use C." ends a sentence far
    # more often in memories than "J. R. R. Tolkien" appears.
    stripped = chunk.rstrip(".").strip()
    return bool(stripped) and stripped.rsplit(None, 1)[-1].lower() in _ABBREVIATIONS


# Words a question opens with (both patterns below).
_ASKS = r"how|what|which|where|why|who|can|could|would|will|should|does|do|did|is|are"
# A question asked after a statement in one sentence: "I'm on Cursor now, how do I set up
# keybindings?", "we bumped the project to python 3.12, are there any deprecations?". The
# question runs to the sentence's end without another comma.
# Where a question or a request after a statement begins: a comma, a dash or a conjunction,
# and perhaps a filler ("..., so anyway how do I ...").
_ASKS_AFTER = (r"(?:[,;]|\s+[-\u2013\u2014]+|\s+(?:so|and|but))\s+(?:(?:so|but|and|ok|okay|anyway|"
               r"also|btw)\s+)?")
_ASKED = re.compile(_ASKS_AFTER + r"(?=(?:" + _ASKS + r"|what's|whats|any|anyone|pls|please|ideas|"
                    r"when (?=would|will|do|does|did|is|are|should|can|could)|"
                    r"thoughts|tips|suggestions|advice|help)\b"
                    r"[^,;]*\?[\"')\]]*$)",
                    re.IGNORECASE)
# ... but not after what is itself asked, supposed or wished ("what if we moved to GCP, would
# it be cheaper?", "if I move to Lisbon, do I need a visa?")
_ASKING = re.compile(r"^(?:" + _ASKS + r"|when|am|if|unless|whether|wonder|wondering|not sure|"
                     r"maybe|might|thinking)\b", re.IGNORECASE)


# A request made after a statement, asked without a question mark as people type them ("the
# Postgres migration wrapped up, can you help me rewrite this query", "... so pescatarian
# these days I guess. quick weeknight salmon ideas"): it runs to the sentence's end.
_REQUESTED = re.compile(_ASKS_AFTER + r"(?=(?:(?:can|could|would|will) (?:you|u|someone|anyone)|"
                        r"help me|any (?:tips|ideas|advice|recs|"
                        r"recommendations|suggestions)|how (?:do|can|should|would|to) |"
                        r"is (?:that|this|it) (?:normal|expected|ok|okay|fine|right|true)|"
                        r"need (?:help|ideas|advice|tips)|what(?:'s| is| are) (?:the|a|some|"
                        r"my|good))\b)", re.IGNORECASE)


def asked_apart(sentence: str) -> list[str]:
    """A sentence that states something and then asks, as the two: the statement is read
    (a question states no fact, so asked together the statement was lost)."""
    m = _ASKED.search(sentence)
    if m is None or not sentence.rstrip().endswith(("?", "?)", '?"')):
        m = _REQUESTED.search(sentence)
    if m is None:
        return [sentence]
    said, asked = sentence[:m.start()].strip(), sentence[m.end():].strip()
    if len(said.split()) < 3 or _ASKING.match(said):
        return [sentence]
    return [said, asked[:1].upper() + asked[1:]]


def split_sentences(text: str) -> list[str]:
    """Split into sentences: on terminal punctuation, on blank lines and list items.

    Keeps each sentence's own wording and end punctuation; drops empty pieces only.
    """
    sentences: list[str] = []
    for line in re.split(r"\n+", text.replace("\r\n", "\n").replace("\r", "\n")):
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        start = 0
        for match in _END.finditer(line + " "):
            end = match.end(2)
            chunk = line[start:end].strip()
            if match.group(1) == "." and _is_abbreviation(line[start:match.end(1)]):
                continue
            if chunk:
                sentences.extend(asked_apart(chunk))
            start = match.end()
        rest = line[start:].strip()
        if rest:
            sentences.extend(asked_apart(rest))
    return sentences


def fold(text: str) -> str:
    """NFKC, curly quotes made straight, whitespace collapsed: the form every rule reads."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    return re.sub(r"\s+", " ", text.replace("\u201d", '"')).strip()


_LONE_I = re.compile(r"(?<![\w'.-])i(?=(?:'(?:m|ve|d|ll))?(?![\w.-]))")


def cased(sentence: str) -> str:
    """The sentence as it is read when typed without capitals: "I" for a lone "i", a capital
    first letter ("finally moved to Denver, i love it" -> "Finally ... I love it"), and the
    names of languages, which English always writes with one ("i speak french" -> "French").
    Rules find subjects, sentence starts and proper names by these; other names stay as
    typed."""
    sentence = _languages().sub(lambda m: m[0].title(), _LONE_I.sub("I", sentence))
    return sentence[:1].upper() + sentence[1:]


@functools.cache
def _languages() -> re.Pattern[str]:
    from .lexicon import NATURAL_LANGUAGES  # the lexicon reads its names with `fold`

    # not "polish": also a verb and a noun ("nail polish")
    return re.compile(r"(?<![\w'.-])(?:" + "|".join(sorted(NATURAL_LANGUAGES - {"polish"})) +
                      r")(?![\w'-])")


def words(sentence: str) -> list[str]:
    """Lowercase word tokens, curly apostrophes folded."""
    return _WORD.findall(sentence.lower().replace("\u2019", "'"))


def is_chitchat(sentence: str) -> bool:
    """True when every word is a greeting, thanks, acknowledgement or glue word
    ("hi", "thanks!", "lol ok", "sounds good, thank you so much")."""
    tokens = words(sentence)
    return all(tok in _FILLER for tok in tokens)
