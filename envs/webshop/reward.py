"""The original WebShop purchase reward (``web_agent_site/engine/goal.py::get_reward`` at HEAD 64fa2a5).

total = (attributes matched + options matched + price ok) / (#attributes + #options + 1) x r_type, and
success means total == 1. Fuzzy matching reproduces ``thefuzz.fuzz.token_set_ratio`` (its ``force_ascii``,
default processing, rounding to an int) with rapidfuzz. Title nouns come from an English spaCy pipeline, as
in the original (its HEAD loads ``en_core_web_sm``); without one, from a documented fallback that the
environment accepts only on the bundled catalog or when asked to: alphabetic tokens that are not stop words.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from collections.abc import Iterable, Iterator, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rapidfuzz import fuzz, utils

from ..errors import EnvDataError

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

FALLBACK = "fallback"
FUZZY_THRESHOLD = 85
NOUN_TAGS = ("PNOUN", "NOUN", "PROPN")
TAG_BATCH = 256  # titles per nlp.pipe batch: the small English pipeline's own default, and fastest here
# Neither writes POS tags (nor does anything after them in spaCy's English pipelines): skipping them halves
# the cost of a purchase and leaves every tag as the full pipeline sets it.
POS_NEUTRAL_FACTORIES = ("lemmatizer", "ner")
# web_agent_site/engine/normalize.py: the first base colour found as a substring replaces the value.
COLOR_SET = tuple(
    """
    alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze brown burgundy
    camel camo caramel champagne charcoal cheetah chestnut chocolate christmas coffee cognac copper coral
    cranberry cream crystal dark denim eggplant elephant espresso fuchsia gold granite grape graphite grass
    gray green grey heather indigo ivory ivy khaki lavender lemon leopard light lilac lime magenta maroon
    mauve merlot midnight mint mocha multicolor mushroom mustard natural navy nude olive orange peach
    pewter pink plum purple rainbow red rose royal rust sand sapphire seashell silver skull slate steel
    stone stonewash sunflower tan taupe teal tiger turquoise violet walnut wheat white wine yellow
    """.split()
)


_LATIN1 = dict.fromkeys(range(128, 256))  # thefuzz's `force_ascii` drops exactly these code points


def fuzzy_ratio(a: Any, b: Any) -> int:
    """``thefuzz.fuzz.token_set_ratio(a, b)``: ``str()``, drop U+0080-U+00FF, default processing, round."""
    a, b = (str(x).translate(_LATIN1) for x in (a, b))
    return round(fuzz.token_set_ratio(a, b, processor=utils.default_process))


def normalize_color(value: Any) -> Any:
    """Replace ``value`` by the first base colour it contains (``in``, so tuples match whole elements)."""
    for color in COLOR_SET:
        if color in value:
            return color
    return value


def _meta(location: Path) -> dict[str, Any] | None:
    """A spaCy pipeline's ``meta.json`` (package root or pipeline folder), or None if there is none."""
    try:
        return json.loads((location / "meta.json").read_text())
    except (OSError, ValueError):
        return None


def _package_meta(module: str) -> dict[str, Any] | None:
    """The meta of an installed pipeline package, found without importing it (or spaCy)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # a dotted name whose parent is missing, or an empty name
        return None
    locations = (spec.submodule_search_locations or []) if spec else []
    return next((meta for meta in map(_meta, map(Path, locations)) if meta), None)


def is_pipeline_package(name: str) -> bool:
    """Whether ``name`` names an installed pipeline package (by module name: its distribution may be named
    otherwise), which spaCy prefers to a folder of that name."""
    return _package_meta(name) is not None


def _pipeline_meta(name: str) -> dict[str, Any] | None:
    """The meta of pipeline package ``name``, else of pipeline folder ``name`` (spaCy's own order)."""
    return _package_meta(name) or _meta(Path(name).expanduser())


def _tags_pos(meta: dict[str, Any]) -> bool:
    return bool({"tagger", "morphologizer"} & set(meta.get("pipeline", [])))


def english_pipelines() -> list[str]:
    """Installed English spaCy pipelines with a POS tagger, the original's ``en_core_web_sm`` kind first.

    spaCy lists installed pipeline packages as ``spacy_models`` entry points (``spacy.util.
    get_installed_models`` reads the same list); reading it here avoids importing spaCy.
    """
    found = []
    for entry in importlib.metadata.entry_points(group="spacy_models"):
        meta = _package_meta(entry.value)
        if meta and meta.get("lang") == "en" and _tags_pos(meta):
            found.append(entry.value)
    return sorted(set(found), key=lambda name: ("core_web_sm" not in name, name))


@cache
def noun_source(spacy_model: str | None = None) -> str:
    """``"spacy:<package or folder>"`` for the pipeline that tags title nouns, or ``"fallback"``.

    ``spacy_model`` names an installed pipeline package or a pipeline folder; None picks the first of
    ``english_pipelines()``.
    """
    if spacy_model is None:
        return next((f"spacy:{name}" for name in english_pipelines()), FALLBACK)
    meta = _pipeline_meta(spacy_model)
    if meta is None:
        raise EnvDataError(f"spacy_model {spacy_model!r} is neither an installed spaCy pipeline package nor a "
                         "pipeline folder (one with a meta.json)")
    if meta.get("lang") != "en":
        raise EnvDataError(
            f"spacy_model {spacy_model!r} is a {meta.get('lang')!r} pipeline; WebShop titles are English"
        )
    if not _tags_pos(meta):
        raise EnvDataError(f"spacy_model {spacy_model!r} has no POS tagger (pipeline {meta.get('pipeline')})")
    return f"spacy:{spacy_model}"


def noun_source_fingerprint(source: str) -> dict[str, Any]:
    """What a run records about the noun source: the pipeline, its version and spaCy's."""
    if source == FALLBACK:
        return {"source": FALLBACK}
    meta = _pipeline_meta(source.removeprefix("spacy:")) or {}
    return {"source": source, "version": meta.get("version"), "spacy": importlib.metadata.version("spacy")}


@cache
def _pipeline(source: str) -> Language:
    """Loaded on first use: spaCy (through thinc) takes seconds to import."""
    import spacy

    if source == FALLBACK:
        return spacy.blank("en")
    name = source.removeprefix("spacy:")
    if is_pipeline_package(name):
        nlp = spacy.util.load_model_from_package(name)
    else:
        nlp = spacy.load(Path(name).expanduser())
    skipped = [n for n in nlp.pipe_names if nlp.get_pipe_meta(n).factory in POS_NEUTRAL_FACTORIES]
    nlp.select_pipes(disable=skipped)
    return nlp


def _doc_nouns(doc: Doc, source: str) -> tuple[str, ...]:
    if source == FALLBACK:
        return tuple(t.text.lower() for t in doc if t.is_alpha and not t.is_stop)
    return tuple(t.text.lower() for t in doc if t.pos_ in NOUN_TAGS)


@lru_cache(maxsize=65536)
def nouns(text: str, source: str) -> tuple[str, ...]:
    """The lower-cased NOUN/PROPN tokens of ``text`` (repeats kept) under the noun source ``source``."""
    return _doc_nouns(_pipeline(source)(text), source)


def nouns_in_batches(texts: Iterable[str], source: str) -> Iterator[tuple[str, ...]]:
    """``nouns()`` of each text, tagged ``TAG_BATCH`` at a time: 2-3 times faster than one by one, with the
    same tags (``nlp.pipe`` runs the same components on each document)."""
    for doc in _pipeline(source).pipe(texts, batch_size=TAG_BATCH):
        yield _doc_nouns(doc, source)


def type_reward(
    product: dict[str, Any],
    goal: dict[str, Any],
    source: str | None = None,
    title_nouns: Mapping[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """r_type: 1, or 0.5 when query, category and title all disagree; 0.1 / 0 for weak / no title overlap.

    ``source`` is a ``noun_source()`` value (default: the detected one); ``title_nouns`` holds titles
    already tagged under it (``titles.title_nouns``), so that a purchase looks their nouns up.
    """
    source = source or noun_source()
    title_nouns = title_nouns or {}

    def nouns_of(title: str) -> tuple[str, ...]:
        found = title_nouns.get(title)
        return nouns(title, source) if found is None else found

    query_match = product["query"] == goal["query"]
    product_path = {x.strip() for x in product["product_category"].split("›")}
    goal_path = {x.strip() for x in goal["product_category"].split("›")}
    category_match = len(product_path & goal_path) >= 2
    wanted = nouns_of(goal["name"])  # the original divides by the number of goal nouns, repeats included
    title_score = len(set(nouns_of(product["name"])) & set(wanted)) / len(wanted) if wanted else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return {
        "r_type": r_type,
        "query_match": query_match,
        "category_match": category_match,
        "title_score": title_score,
    }


def attribute_matches(product: dict[str, Any], goal: dict[str, Any]) -> int:
    """Goal attributes found fuzzily in the product's attributes, else verbatim in its title/features/description."""
    texts = (
        product["Title"].lower(),
        " ".join(product["BulletPoints"]).lower(),
        product["Description"].lower(),
    )
    matched = 0
    for wanted in goal["attributes"]:
        if any(fuzzy_ratio(have, wanted) > FUZZY_THRESHOLD for have in product["Attributes"]):
            matched += 1
        elif any(wanted in text for text in texts):
            matched += 1
    return matched


def option_matches(purchased: list[str], goal_options: list[Any]) -> int:
    """Goal options (colour-normalised) matched by some purchased option value."""
    purchased = [normalize_color(o) for o in purchased]
    return sum(
        any(fuzzy_ratio(have, normalize_color(wanted)) > FUZZY_THRESHOLD for have in purchased)
        for wanted in goal_options
    )


def goal_option_list(goal: dict[str, Any]) -> list[Any]:
    """Goal options as the original passes them: a list, or for synthetic goals the dict's (name, value) items."""
    options = goal["goal_options"]
    return list(options.items() if isinstance(options, dict) else options)


def get_reward(
    product: dict[str, Any],
    goal: dict[str, Any],
    price: float,
    options: dict[str, str],
    source: str | None = None,
    title_nouns: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[float, dict[str, Any]]:
    """The purchase reward and its parts (the original's ``verbose`` info plus the noun source)."""
    source = source or noun_source()
    type_info = type_reward(product, goal, source, title_nouns)
    goal_options = goal_option_list(goal)  # synthetic goals: (name, value) tuples, an upstream quirk kept
    n_attr = attribute_matches(product, goal)
    n_opt = option_matches(list(options.values()), goal_options)
    r_price = price <= goal["price_upper"]
    denominator = len(goal["attributes"]) + len(goal_options) + 1
    total = (n_attr + n_opt + r_price) / denominator * type_info["r_type"]
    info = {
        **type_info,
        "r_att": n_attr / len(goal["attributes"]),
        "w_att": len(goal["attributes"]) / denominator,
        "r_price": r_price,
        "w_price": 1 / denominator,
        "nouns": source,
    }
    if goal_options:
        info["r_option"] = n_opt / len(goal_options)
        info["w_option"] = len(goal_options) / denominator
    return total, info
