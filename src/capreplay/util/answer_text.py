"""The normal form of an answer: how the study's READ scoring and the judge's checks compare texts.

The normalisation is the earlier study's (methodology, "READ scoring"), applied in its order:

1. Unicode NFKC.
2. Drop a backslash before ASCII punctuation (Markdown escapes such as ``\\_`` and ``\\*``).
3. Map Unicode dashes to ``-``.
4. Trim and collapse whitespace.
5. Strip one trailing ``.``.
6. Casefold (and NFKC again, see :func:`normalize_answer`).

Three details make it idempotent (normalising twice changes nothing, so a stored normal form can be
normalised again safely), and differ from a literal reading only on odd strings:

- dashes are mapped before backslashes are dropped, so ``\\—`` becomes ``-`` in one pass rather
  than ``\\-`` that a second pass would change again;
- every backslash followed by ASCII punctuation is dropped, a backslash counting as punctuation, so
  ``\\\\*`` becomes ``*`` rather than ``\\*``;
- the trailing ``.`` is stripped only when it is not part of a run of dots (``Loading...`` keeps
  its ellipsis), with the whitespace it leaves, and again if another lone ``.`` then ends the text.

Pure functions, no I/O.
"""

from __future__ import annotations

import re
import string
import unicodedata

_BACKSLASH_BEFORE_PUNCT = re.compile(r"\\(?=[" + re.escape(string.punctuation) + r"])")

# Unicode dashes: every character of category Pd (dash punctuation) other than "-" itself, as of
# Unicode 15.0 (Python 3.12), listed rather than computed so the set scored by a registered study is
# fixed and visible; plus U+2212 MINUS SIGN (category Sm), which pages print where a model types "-".
_DASHES = (
    "\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d"
    "\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead"
    "\u2212"
)
_DASH_TABLE = str.maketrans(dict.fromkeys(_DASHES, "-"))


def _strip_period(text: str) -> str:
    """Strip a sentence-final ``.`` (and the space before it), leaving a run of two or more dots alone."""
    while text.endswith(".") and not text.endswith(".."):
        text = text[:-1].rstrip()
    return text


def normalize_answer(text: str) -> str:
    """The READ normal form of ``text``: NFKC, unescaped, plain dashes, single spaces, no final ``.``, casefolded."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(_DASH_TABLE)
    text = _BACKSLASH_BEFORE_PUNCT.sub("", text)
    text = " ".join(text.split())
    text = _strip_period(text)
    # Casefolding can leave a letter and a combining mark that NFKC composes ("ß" + U+0301 becomes
    # "ss" + U+0301, which composes to "sś"), so the result is put back in NFKC.
    return unicodedata.normalize("NFKC", text.casefold())
