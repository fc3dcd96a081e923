"""The shop's page state machine and its two text renderings.

Routing follows the original text environment (``SimServer.receive``): ``search[...]`` works from any page;
``back to search`` resets the session; ``next >``/``< prev`` page through results; ``< prev`` goes from a
sub-page to its item page and from an item page to the results; clicking an option value records it;
``buy now`` ends the episode. Renderings: the original ``text`` mode (visible strings joined by ``[SEP]``)
and the text ReAct's WebShop wrapper shows (buttons as ``[Button]`` lines, first 3 results only).
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
# The done page's debug fields, which the text environment renders empty (it passes no goal to the template).
DONE_PAGE_EMPTY_FIELDS = (
    "attrs [SEP] None [SEP] category [SEP] None [SEP] query [SEP] None [SEP] product category [SEP] None [SEP] "
    "Target [SEP] asin [SEP] options [SEP] attrs [SEP] price upper [SEP] instuction text [SEP] category [SEP] "
    "product category [SEP] query [SEP] Goal [SEP] None [SEP] Reward"
).split(" [SEP] ")
ATTRIBUTES = "Attributes"


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


class Shop:
    """One shopping session: the current page and the clicks it offers."""

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

    @property
    def product(self) -> dict[str, Any] | None:
        return self.products.get(self.page.asin) if self.page.asin else None

    def clickables(self) -> dict[str, Click]:
        """Lower-cased clickable texts in page order (buttons, product links, then option values)."""
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
                out.update({value: ("option", name) for value in values})
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
            self.page = Page()
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
        elif action == "option":
            page.options[arg] = text
        elif action == "sub_page":
            page.kind, page.sub_page = SUB_PAGE, arg
        elif action == "buy":
            page.kind = DONE
            return True
        return False


def _sub_page_texts(product: dict[str, Any], sub_page: str) -> list[str]:
    if sub_page == "Description":
        return [product["Description"]] if product["Description"] else []
    if sub_page == "Features":
        return list(product["BulletPoints"]) or ["No Features"]
    if sub_page == "Reviews":
        reviews = product.get("Reviews") or []
        texts = [
            t
            for r in reviews
            for t in (f'"{r.get("title", "")}"', str(r.get("score", "")), r.get("body", ""))
        ]
        return texts or ["No reviews found"]
    return list(product["Attributes"])


def render_sep(shop: Shop, instruction: str) -> str:
    """The original ``observation_mode="text"``: the page's visible strings joined by `` [SEP] ``."""
    page, product = shop.page, shop.product
    head = ["Instruction:", instruction, BACK_TO_SEARCH]
    if page.kind == SEARCH:
        parts = ["WebShop", "Instruction:", instruction, "Search"]
    elif page.kind == RESULTS:
        parts = [*head, f"Page {page.number} (Total results: {len(page.results)})"]
        parts += [PREV_PAGE] if page.number > 1 else []
        parts.append(NEXT_PAGE)
        for asin in page.shown():
            parts += [asin, shop.products[asin]["Title"], shop.products[asin]["Price"]]
    elif page.kind == ITEM:
        parts = [*head, PREV_PAGE]
        for name, values in product["options"].items():
            parts += [name, *values]
        parts += [product["Title"], f"Price: {product['Price']}", f"Rating: {product['Rating']}"]
        parts += [*shop.sub_pages, BUY_NOW]
    elif page.kind == SUB_PAGE:
        parts = [*head, PREV_PAGE, *_sub_page_texts(product, page.sub_page)]
    else:
        parts = [
            "Thank you for shopping with us!",
            "Your code:",
            "None",
            "(Paste it in your MTurk interface.)",
            "Purchased",
            "asin",
            page.asin,
            "options",
            json.dumps(page.options, sort_keys=True),  # Flask's tojson
            *DONE_PAGE_EMPTY_FIELDS,
            "Your score (min 0.0, max 1.0)",
            str(page.reward),
        ]
    return " [SEP] ".join(parts)


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
        lines += [f"[{PREV_PAGE}]", *_sub_page_texts(product, page.sub_page)]
    return "\n".join(lines)
