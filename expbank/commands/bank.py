"""``expbank bank ...``: build, query, inspect and curate an experience bank.

The bank modules keep faiss and sentence-transformers lazy, so they load only when a subcommand needs them.
"""

from __future__ import annotations

import argparse
import json
import sys

from expbank.bank.build import build, export_entries, import_entries, merge_banks, read_entries
from expbank.bank.curation import prune
from expbank.bank.retrieval import format_experience, search
from expbank.bank.store import Bank, BankSettings
from expbank.bank.summarise import make_summariser
from expbank.bank.utility import plan_prune
from expbank.errors import UserError
from expbank.training.actors.openai_compat import OpenAICompatBackend


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="bank_command", metavar="ACTION", required=True)

    p = sub.add_parser("build", help="summarise trajectories into a bank (creates it or adds to it)")
    p.add_argument("trajectories", nargs="+", metavar="TRAJ.jsonl")
    p.add_argument("--out", required=True, metavar="BANK", help="bank directory (created or extended)")
    p.add_argument("--summariser", choices=["rule", "llm"], default="rule")
    p.add_argument("--llm-model", help="model name for --summariser llm (OpenAI-compatible server)")
    p.add_argument("--llm-base-url", help="server URL for --summariser llm, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--llm-max-entries", type=int, default=3)
    p.add_argument("--llm-retries", type=int, default=2)
    p.add_argument("--embedder", help="sentence-transformers name or path (new banks only)")
    p.add_argument("--dedup-threshold", type=float, help="new banks only; default 0.9")
    p.add_argument("--gate", choices=["quarantine", "redact"], help="new banks only; default quarantine")
    p.add_argument("--hnsw-min-size", type=int, help="new banks only; switch to HNSW at this many rows")
    p.add_argument("--excerpt-tokens", type=int, default=256, help="token cap of trajectory excerpts")

    p = sub.add_parser("query", help="retrieve the top-k entries for a query or a task (+ observation)")
    p.add_argument("bank", metavar="BANK")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--query", help="free text, matched against situations")
    group.add_argument("--task", help="goal text, matched against entry tasks")
    p.add_argument("--observation", help="with --task: matched against situations")
    p.add_argument("-k", type=int, default=3)
    p.add_argument("--kinds", nargs="+", choices=["strategy", "warning", "trajectory"],
                   help="default: strategy warning (the bank arm)")
    p.add_argument("--key", choices=["both", "task", "situation"], default="both")
    p.add_argument("--exclude-task-ids", nargs="*", default=[])
    p.add_argument("--utility-weight", type=float, help="λ of similarity + λ·utility (default: the bank's)")
    p.add_argument("--json", action="store_true", help="a JSON list of entries with their score")

    p = sub.add_parser("stats", help="entry counts by kind and trust")
    p.add_argument("bank", metavar="BANK")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("prune", help="remove low-utility entries and enforce a capacity (logged)")
    p.add_argument("bank", metavar="BANK")
    p.add_argument("--min-uses", type=int, default=3)
    p.add_argument("--threshold", type=float, default=0.3)
    p.add_argument("--capacity", type=int)
    p.add_argument("--dry-run", action="store_true", help="print what would go; change nothing")

    p = sub.add_parser("export", help="write entries as JSONL (re-importable) or Markdown")
    p.add_argument("bank", metavar="BANK")
    p.add_argument("--format", choices=["jsonl", "markdown"], default="jsonl")
    p.add_argument("--out", help="file (default: stdout)")

    p = sub.add_parser("import", help="add (or, with --replace, set) entries from an exported JSONL file")
    p.add_argument("bank", metavar="BANK")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--replace", action="store_true", help="also delete entries the file does not hold")

    p = sub.add_parser("merge", help="merge two banks into a new one (dedup applied)")
    p.add_argument("first", metavar="A")
    p.add_argument("second", metavar="B")
    p.add_argument("--out", required=True, metavar="C")

    for name, text in (("pin", "never prune or evict an entry"), ("unpin", "let an entry be pruned again")):
        p = sub.add_parser(name, help=text)
        p.add_argument("bank", metavar="BANK")
        p.add_argument("id", metavar="ID", help="entry id (a unique prefix is enough)")

    p = sub.add_parser("quarantine", help="list quarantined entries, or promote / delete one")
    p.add_argument("bank", metavar="BANK")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--promote", metavar="ID", help="mark trusted (it becomes retrievable)")
    action.add_argument("--delete", metavar="ID")
    action.add_argument("--add", metavar="ID", help="quarantine a trusted entry by hand")
    p.add_argument("--reason", default="by hand", help="reason recorded with --add")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    return globals()[f"_{args.bank_command}"](args)


# -------------------------------------------------------------------------------------------- actions


def _build(args) -> int:
    options = {"embedder": args.embedder, "dedup_threshold": args.dedup_threshold,
               "gate_action": args.gate, "hnsw_min_size": args.hnsw_min_size}
    settings = BankSettings(**{k: v for k, v in options.items() if v is not None})
    bank = Bank.open_or_create(args.out, settings)
    if args.summariser == "llm":
        if not args.llm_model:
            raise UserError("--summariser llm needs --llm-model (and usually --llm-base-url)")
        backend = OpenAICompatBackend(args.llm_model, args.llm_base_url)
        summariser = make_summariser("llm", backend, max_entries=args.llm_max_entries,
                                     retries=args.llm_retries, excerpt_tokens=args.excerpt_tokens)
    else:
        summariser = make_summariser("rule", excerpt_tokens=args.excerpt_tokens)
    report = build(bank, args.trajectories, summariser)
    bank.save()
    print(f"{args.out}: {report.episodes} new episodes ({report.skipped} already in the bank), "
          f"{report.candidates} candidate entries: {report.added} added, {report.merged} merged, "
          f"{len(report.quarantined)} quarantined, {len(report.redacted)} redacted; "
          f"bank holds {len(bank)} entries")
    if args.summariser == "llm":
        print(f"llm summariser: {summariser.counters}")
    return 0


def _query(args) -> int:
    bank = Bank.open(args.bank, writable=False)
    hits = search(bank, query=args.query, task=args.task, observation=args.observation, k=args.k,
                  key=args.key, kinds=args.kinds, exclude_task_ids=args.exclude_task_ids,
                  utility_weight=args.utility_weight)
    if args.json:
        print(json.dumps([hit.as_dict() for hit in hits], indent=2))
    else:
        for hit in hits:
            print(f"{hit.score:.3f}  {hit.entry.kind:10s} {hit.entry.task_type:32s} {hit.entry.id[:12]}")
        print(format_experience(hit.entry for hit in hits))
    return 0


def _stats(args) -> int:
    stats = Bank.open(args.bank, writable=False).stats()
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        for key, value in stats.items():
            print(f"{key}: {value}")
    return 0


def _prune(args) -> int:
    bank = Bank.open(args.bank, writable=not args.dry_run)
    if args.dry_run:
        removals = plan_prune(bank.entries(include_quarantined=True), args.min_uses, args.threshold,
                              args.capacity)
    else:
        removals = prune(bank, args.min_uses, args.threshold, args.capacity)
        bank.save()
    for removal in removals:
        print(f"{'would remove' if args.dry_run else 'removed'} {removal.id}: {removal.reason}")
    print(f"{len(removals)} entries {'would be ' if args.dry_run else ''}removed; {len(bank)} remain")
    return 0


def _export(args) -> int:
    bank = Bank.open(args.bank, writable=False)
    count = export_entries(bank, args.out or sys.stdout, args.format)
    if args.out:
        print(f"{args.out}: {count} entries")
    return 0


def _import(args) -> int:
    bank = Bank.open(args.bank)
    counts = import_entries(bank, read_entries(args.file), replace=args.replace)
    bank.save()
    print(f"{args.bank}: " + ", ".join(f"{v} {k}" for k, v in counts.items()) + f"; {len(bank)} entries")
    return 0


def _merge(args) -> int:
    merged = merge_banks(Bank.open(args.first, writable=False), Bank.open(args.second, writable=False), args.out)
    merged.save()
    print(f"{args.out}: {len(merged)} entries")
    return 0


def _resolve(bank, prefix: str) -> str:
    matches = [e.id for e in bank.entries(include_quarantined=True) if e.id.startswith(prefix)]
    if len(matches) != 1:
        raise UserError(f"{'no' if not matches else 'more than one'} entry id starts with '{prefix}'")
    return matches[0]


def _pin(args, pinned: bool = True) -> int:
    bank = Bank.open(args.bank)
    entry_id = _resolve(bank, args.id)
    bank.update(entry_id, "pin" if pinned else "unpin", pinned=pinned)
    bank.save()
    print(f"{'pinned' if pinned else 'unpinned'} {entry_id}")
    return 0


def _unpin(args) -> int:
    return _pin(args, pinned=False)


def _quarantine(args) -> int:
    bank = Bank.open(args.bank, writable=bool(args.promote or args.delete or args.add))
    if args.promote:
        entry_id = _resolve(bank, args.promote)
        bank.update(entry_id, "promote", "by hand", provenance={"trust": "trusted", "trust_reason": None})
        print(f"promoted {entry_id}")
    elif args.delete:
        entry_id = _resolve(bank, args.delete)
        bank.delete([entry_id], event="delete", reasons={entry_id: "deleted from quarantine by hand"})
        print(f"deleted {entry_id}")
    elif args.add:
        entry_id = _resolve(bank, args.add)
        bank.update(entry_id, "quarantine", args.reason,
                    provenance={"trust": "quarantined", "trust_reason": args.reason})
        print(f"quarantined {entry_id}")
    else:
        held = [e for e in bank.entries(include_quarantined=True) if e.provenance.trust == "quarantined"]
        if args.json:
            print(json.dumps([e.model_dump() for e in held], indent=2))
        else:
            for entry in held:
                print(f"{entry.id}  {entry.kind:10s} {entry.provenance.trust_reason}")
            print(f"{len(held)} quarantined entries", file=sys.stderr)
        return 0
    bank.save()
    return 0
