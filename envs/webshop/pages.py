"""The shop's page state machine and the text renderings of its pages.

Routing follows the original text environment (``SimServer.receive``): ``search[...]`` works from any page;
``back to search`` resets the session; ``next >``/``< prev`` page through results; ``< prev`` goes from a
sub-page to its item page and from an item page to the results; clicking an option value records it;
``buy now`` ends the episode. A click is routed by its text before anything else, so an option whose
value is a button's label ("description", "buy now") acts as that button, as in the original.

Each page is first the list of text nodes the original's HTML templates hold, in document order
(``page_nodes``); the renderings are views of that list: ``text`` (the original ``observation_mode="text"``:
nodes stripped and joined by `` [SEP] ``), ``text_rich`` (the original's tagged mode) and ``react`` (the text
ReAct's WebShop wrapper shows: buttons as ``[Button]`` lines, first 3 results only).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SEARCH, RESULTS, ITEM, SUB_PAGE, DONE = "search", "results", "item", "item_sub_page", "done"
PRODUCT_WINDOW = 10
SEARCH_ACTION = "search[<query>]"  # what admissible_actions lists while the search bar is shown
REACT_RESULTS_SHOWN = 3
BACK_TO_SEARCH, NEXT_PAGE, PREV_PAGE, BUY_NOW = "Back to Search", "Next >", "< Prev", "Buy Now"
SUB_PAGES = ("Description", "Features", "Reviews")
ATTRIBUTES = "Attributes"  # a sub-page whose button the item page shows only with show_attrs
TEXT, BUTTON, OPTION, PRODUCT = "text", "button", "option", "product"
_HTML_SPACE = " \t\n\r\f"
# Routes the original takes by a click's text wherever the text was clicked (options included).
_ROUTED = {
    BUY_NOW.lower(): ("buy", None),
    BACK_TO_SEARCH.lower(): ("back", None),
    PREV_PAGE.lower(): ("prev", None),
    **{name.lower(): ("sub_page", name) for name in (*SUB_PAGES, ATTRIBUTES)},
}


@dataclass
class Page:
    """Everything the original keeps in a session, plus which page is showing."""

    kind: str = SEARCH
    keywords: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)  # asins of the last search, best first (top 50)
    number: int = 1
    asin: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    sub_page: str | None = None
    reward: float = 0.0

    def shown(self) -> list[str]:
        return self.results[(self.number - 1) * PRODUCT_WINDOW : self.number * PRODUCT_WINDOW]


Click = tuple[str, str | None]  # (what the click does, its argument)
Node = tuple[str, str]  # a visible text node as the page's HTML holds it (template spacing kept), its kind


class Shop:
    """One shopping session: the current page, the clicks it offers and the products visited."""

    def __init__(
        self,
        products: dict[str, dict[str, Any]],
        search: Callable[[list[str]], list[str]],
        show_attrs: bool = False,
    ):
        self.products = products
        self.search_fn = search
        self.sub_pages = SUB_PAGES + ((ATTRIBUTES,) if show_attrs else ())
        self.page = Page()
        self.visited: set[str] = set()  # asins opened since the last "back to search" (text_rich marks them)

    @property
    def product(self) -> dict[str, Any] | None:
        return self.products.get(self.page.asin) if self.page.asin else None

    def clickables(self) -> dict[str, Click]:
        """Lower-cased clickable texts in the original's order: buttons, product links, option values."""
        page, out = self.page, {}
        if page.kind == RESULTS:
            out[BACK_TO_SEARCH.lower()] = ("back", None)
            if page.number > 1:
                out[PREV_PAGE.lower()] = ("prev", None)
            out[NEXT_PAGE.lower()] = ("next", None)
            out.update({asin.lower(): ("product", asin) for asin in page.shown()})
        elif page.kind == ITEM:
            out[BACK_TO_SEARCH.lower()] = ("back", None)
            out[PREV_PAGE.lower()] = ("prev", None)
            out.update({name.lower(): ("sub_page", name) for name in self.sub_pages})
            out[BUY_NOW.lower()] = ("buy", None)
            for name, values in self.product["options"].items():
                for value in values:
                    out.setdefault(value, _ROUTED.get(value, ("option", name)))
        elif page.kind == SUB_PAGE:
            out[BACK_TO_SEARCH.lower()] = ("back", None)
            out[PREV_PAGE.lower()] = ("prev", None)
        return out

    def search(self, query: str) -> None:
        keywords = query.split(" ")
        self.page = Page(RESULTS, keywords, self.search_fn(keywords))

    def _show_results(self, number: int) -> None:
        """Results page ``number`` of the last search (the original re-runs it: same hits, except ``<r>``)."""
        self.page = Page(RESULTS, self.page.keywords, self.page.results, number)

    def click(self, text: str) -> bool:
        """Apply a click on ``text`` (a key of ``clickables()``); True when it was ``buy now``."""
        action, arg = self.clickables()[text]
        page = self.page
        if action == "back":
            self.page, self.visited = Page(), set()
        elif action == "next":
            self._show_results(page.number + 1)
        elif action == "prev" and page.kind == RESULTS:
            self._show_results(page.number - 1)
        elif action == "prev" and page.kind == SUB_PAGE:
            page.kind, page.sub_page = ITEM, None
        elif action == "prev":
            self._show_results(page.number)
        elif action == "product":
            page.kind, page.asin = ITEM, arg
            self.visited.add(arg)
        elif action == "option":
            page.options[arg] = text
        elif action == "sub_page":
            page.kind, page.sub_page = SUB_PAGE, arg
        elif action == "buy":
            page.kind = DONE
            return True
        return False


def _visible(text: str, kind: str = TEXT) -> list[Node]:
    """The node BeautifulSoup makes of ``text``: none if empty; spacing alone collapses to one character,
    a newline (which the original's text modes skip) or a space."""
    if text.strip(_HTML_SPACE):
        return [(text, kind)]
    return [] if not text or "\n" in text else [(" ", kind)]


def tojson(value: Any) -> str:
    """Flask's ``tojson`` filter: sorted keys, ASCII escapes, and ``<``, ``>``, ``&``, ``'`` escaped too."""
    text = json.dumps(value, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")


def _sub_page_nodes(product: dict[str, Any], sub_page: str) -> list[Node]:
    """The product text a sub-page shows (no reviews are loaded, so the Reviews page shows none)."""
    if sub_page == "Description":
        return _visible(product["Description"])
    if sub_page == "Features":
        return [n for bullet in product["BulletPoints"] for n in _visible(f" {bullet}")]
    if sub_page == ATTRIBUTES:
        nodes = [n for attribute in product["Attributes"] for n in _visible(f" {attribute}")]
        return nodes + [n for key in ("category", "query", "product_category") for n in _visible(product[key])]
    return []


def page_nodes(shop: Shop, instruction: str) -> list[Node]:
    """The visible text nodes of the current page, in the order of the original's templates."""
    page, product = shop.page, shop.product
    head = [("Instruction:", TEXT), *_visible(instruction), (BACK_TO_SEARCH, BUTTON)]
    if page.kind == SEARCH:
        return [("WebShop", TEXT), ("Instruction: ", TEXT), *_visible(instruction), ("Search", BUTTON)]
    if page.kind == RESULTS:
        nodes = [*head, (f"Page {page.number} (Total results: {len(page.results)})", TEXT)]
        nodes += [(PREV_PAGE, BUTTON)] if page.number > 1 else []
        nodes.append((NEXT_PAGE, BUTTON))
        for asin in page.shown():
            found = shop.products[asin]
            nodes += [(asin, PRODUCT), *_visible(found["Title"]), *_visible(found["Price"])]
        return nodes
    if page.kind == ITEM:
        nodes = [*head, (PREV_PAGE, BUTTON)]
        for name, values in product["options"].items():
            nodes += _visible(name) + [n for value in values for n in _visible(value, OPTION)]
        nodes += _visible(product["Title"])
        nodes += [(f"Price: {product['Price']}", TEXT), (f"Rating: {product['Rating']}", TEXT)]
        return nodes + [(name, BUTTON) for name in (*shop.sub_pages, BUY_NOW)]
    if page.kind == SUB_PAGE:
        return [*head, (PREV_PAGE, BUTTON), *_sub_page_nodes(product, page.sub_page)]
    # The done page; the text environment passes it no goal, code or details, which render as "None" or
    # as nothing.
    texts = ["Thank you for shopping with us!", "Your code: ", "None", " (Paste it in your MTurk interface.)",
             "Purchased", "asin", page.asin, "options", tojson(page.options)]
    texts += [t for label in ("attrs", "category", "query", "product category") for t in (label, "None")]
    texts += ["Target", "asin", "options", "attrs", "price upper", "instuction text", "category",
              "product category", "query", "Goal ", "None", "Reward", "Your score (min 0.0, max 1.0)",
              str(page.reward), "Reward Details ", "None"]
    return [(text, TEXT) for text in texts]


def render_text(shop: Shop, instruction: str) -> str:
    """The original ``observation_mode="text"``: the page's text nodes, stripped, joined by `` [SEP] ``."""
    return " [SEP] ".join([text.strip() for text, _ in page_nodes(shop, instruction)])


def render_text_rich(shop: Shop, instruction: str) -> str:
    """The original ``observation_mode="text_rich"``: a node per line, clickables tagged ``[button]``.

    Chosen option values are tagged ``[clicked button]`` and announced at the top ("You have clicked X."),
    visited products are tagged ``[clicked button]``. The original finds chosen values by looking for
    ``"value"`` in the page's URL, which holds the search words and the chosen options as JSON; so does this.
    """
    page = shop.page
    url = "+".join(page.keywords) + "/" + json.dumps(page.options)
    head, lines = [], []
    for text, kind in page_nodes(shop, instruction):
        if kind == BUTTON:
            lines.append(f"[button] {text} [button_]")
        elif kind == OPTION and f'"{text}"' in url:
            lines.append(f"  [clicked button] {text} [clicked button_]")
            head.insert(0, f"You have clicked {text}.\n")
        elif kind == OPTION:
            lines.append(f"  [button] {text} [button_]")
        elif kind == PRODUCT:
            tag = "clicked button" if text in shop.visited else "button"
            lines.append(f"\n[{tag}] {text} [{tag}_]")
        else:
            lines.append(text)
    return "".join(head) + "".join(line + "\n" for line in lines)


def render_react(shop: Shop, instruction: str) -> str:
    """The ReAct wrapper's text: ``[Button]`` lines, options as ``name [a][b]`` (``[[x]]`` when chosen)."""
    page, product = shop.page, shop.product
    if page.kind == SEARCH:
        return f"WebShop\nInstruction:\n{instruction}\n[Search]"
    if page.kind == DONE:
        return f"Your score (min 0.0, max 1.0): {page.reward}"
    lines = [f"[{BACK_TO_SEARCH}]"]
    if page.kind == RESULTS:
        lines.append(f"Page {page.number} (Total results: {len(page.results)})")
        lines += [f"[{PREV_PAGE}]"] if page.number > 1 else []
        lines.append(f"[{NEXT_PAGE}]")
        for asin in page.shown()[:REACT_RESULTS_SHOWN]:
            lines += [f"[{asin}]", shop.products[asin]["Title"], shop.products[asin]["Price"]]
    elif page.kind == ITEM:
        lines.append(f"[{PREV_PAGE}]")
        for name, values in product["options"].items():
            chosen = page.options.get(name)
            lines.append(name + " " + "".join(f"[[{v}]]" if v == chosen else f"[{v}]" for v in values))
        lines += [product["Title"], f"Price: {product['Price']}", f"Rating: {product['Rating']}"]
        lines += [f"[{name}]" for name in shop.sub_pages] + [f"[{BUY_NOW}]"]
    else:
        lines += [f"[{PREV_PAGE}]"]
        lines += [t for t in (text.strip() for text, _ in _sub_page_nodes(product, page.sub_page)) if t]
    return "\n".join(lines)
