"""Print (or write) the generated tables of docs/config-reference.md from the config schema.

The tables: every key with its default and description (``expbank/config.py``), and the renamed keys still
read with a warning.

    python scripts/config_reference.py           # print the tables
    python scripts/config_reference.py --write   # put them into docs/config-reference.md

The doc holds each table between ``<!-- NAME -->`` and ``<!-- /NAME -->``; tests/test_config.py checks that it
holds what this script prints, so a key added without ``--write`` fails the tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from expbank.config import RENAMED_KEYS, key_fields

DOC = Path(__file__).resolve().parent.parent / "docs" / "config-reference.md"


def key_rows() -> list[tuple[str, str, str | None]]:
    """(dotted key, default as the doc shows it, the schema's description or None) in schema order."""
    rows = []
    for key, field in key_fields():
        default = field.get_default(call_default_factory=True)
        shown = default if isinstance(default, str) else json.dumps(default, ensure_ascii=False)
        rows.append((key, shown, field.description))
    return rows


def tables() -> dict[str, str]:
    """Each generated table of the doc, by marker name."""
    keys = ["| key | default | what it does |", "|---|---|---|"]
    keys += [f"| `{key}` | `{default}` | {description} |"
             for key, default, description in key_rows()]
    renamed = ["| old key | new key |", "|---|---|"]
    renamed += [f"| `{old}` | `{new}` |" for old, new in RENAMED_KEYS.items()]
    return {"config-keys": "\n".join(keys), "renamed-keys": "\n".join(renamed)}


def render(doc: str) -> str:
    """``doc`` with every generated table replaced by the one the schema gives."""
    for name, table in tables().items():
        begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
        if doc.count(begin) != 1 or doc.count(end) != 1:
            raise SystemExit(f"{DOC} needs one '{begin}' and one '{end}' line around the {name} table")
        head, rest = doc.split(begin)
        tail = rest.split(end)[1]
        doc = f"{head}{begin}\n{table}\n{end}{tail}"
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="update docs/config-reference.md in place")
    args = parser.parse_args()
    if args.write:
        DOC.write_text(render(DOC.read_text()))
    else:
        sys.stdout.write("\n\n".join(tables().values()) + "\n")


if __name__ == "__main__":
    main()
