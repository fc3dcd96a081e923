"""Write gate: keep instruction-shaped text out of what an actor is shown (memory poisoning defence).

An observation can carry text written by a third party (a product description, a note in a room). Once it
is distilled into the bank, every later episode would be shown it, so text that *addresses the reader*
is not allowed to reach a trusted entry. The gate flags:

* ``addresses-agent``: text speaking to an AI / agent / assistant / model / the reader of memory, or chat
  role markers (``system:``, ``<|im_start|>``);
* ``override``: ignore / disregard / forget / override previous instructions or rules, "new instructions",
  "your real task";
* ``always-never``: imperative "always ..." / "never ..." / "from now on" / "in all future tasks";
* ``memory-write``: asks to remember, store, save, forward, send or share something;
* ``url`` and ``email``: links and addresses (exfiltration targets).

The rules are deliberately narrow so the environments' own text ("You are in the middle of a room…",
"Your task is to: …", WebShop's "Instruction: [SEP] …", "Back to Search", "Buy Now") passes. A flagged
entry is either quarantined (default) or has each flagged sentence replaced by ``[redacted]``; a redacted
entry that still scans dirty is quarantined.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from expbank.bank.entry import Entry, Redaction

GateAction = Literal["quarantine", "redact"]

# "model" and "bot" alone are left out: WebShop titles say "for Model 3", "robot".
_AGENT = r"(?:ai|a\.i\.|ai model|agent|assistant|llm|language model|chat ?bot|gpt|claude)s?"
_VERBS = (r"(?:do|say|output|respond|reply|answer|choose|select|click|buy|purchase|take|use|go|follow|"
          r"trust|reveal|tell|include|print|write|send|call|run|execute|mention|recommend|pick|put|check|"
          r"report|obey|comply|prefer|ignore|skip|visit|start|end|add|remember|store|save|return)")
_SENTENCE_START = r"(?:^|[.!?:;\n]\s*|\[sep\]\s*|\byou (?:must|should|shall|will|need to)\s+)"

RULES: list[tuple[str, re.Pattern[str]]] = [
    ("addresses-agent", re.compile(
        rf"\b(?:hey|hi|hello|dear|attention|note to|message to|to|for|calling)\s+(?:the |all |any |every )?"
        rf"(?:ai |autonomous |shopping |household )?{_AGENT}\b|"
        rf"\b(?:you are|you're|as) (?:an?|the) (?:helpful |autonomous |shopping |household )?{_AGENT}\b|"
        r"\b(?:reader|readers|user) of (?:this |the )?(?:memory|memories|notes?|bank)\b|"
        r"\bwhoever (?:reads|retrieves|sees) this\b|\bif you are an? (?:ai|agent|assistant|llm|language model)\b|"
        r"(?:^|[\n.!?]\s*)(?:system|assistant|developer)\s*:|"
        r"<\|?(?:im_start|im_end|system|endoftext)\|?>|\[/?inst\]|<<sys>>|\bsystem prompt\b",
        re.IGNORECASE)),
    ("override", re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?"
        r"\b(?:instructions?|rules|prompts?|guidance|guidelines|directions|constraints|above|previous|prior|"
        r"earlier)\b|"
        r"\b(?:new|updated|revised|secret|hidden)\s+(?:instructions|directives?|orders|prompt)\b|"
        r"\b(?:your|the) (?:real|true|actual|secret|hidden|new) (?:task|objective|goal|mission|instructions?)\b|"
        r"\bdeveloper mode\b|\binstead(?:,)?\s+(?:you\s+)?(?:must|should|will)\b|\bdo not tell\b|\bdon't tell\b",
        re.IGNORECASE)),
    ("always-never", re.compile(
        rf"{_SENTENCE_START}(?:always|never)\s+(?:\w+\s+){{0,1}}{_VERBS}\b|"
        r"\bfrom now on\b|\bgoing forward\b|\bhenceforth\b|"
        r"\b(?:in|for) (?:all |every |any )?(?:future|subsequent|later) (?:tasks?|episodes?|runs?|"
        r"sessions?|conversations?|queries|requests)\b",
        re.IGNORECASE)),
    ("memory-write", re.compile(
        r"\b(?:remember|memori[sz]e|store|save|record|write down|note down|forward|send|e-?mail|leak|"
        r"exfiltrate|upload|transmit)\b[^.\n]{0,30}?\b(?:this|that|these|the following|it|your|all|"
        r"password|key|token|credentials?|secret|instructions?|message|data|conversation|history)\b"
        r"[^.\n]{0,40}?\b(?:memory|memories|notes|bank|forever|permanently|for later|for future|"
        r"future use|next time)\b|"
        r"\b(?:add|write|put|insert|save|store)\b[^.\n]{0,30}?\b(?:to|into|in) (?:your|the|their) "
        r"(?:memory|memories|notes|memory bank|knowledge base|context)\b",
        re.IGNORECASE)),
    ("url", re.compile(
        r"\b(?:https?|ftp|file)://\S+|\bwww\.[\w-]+\.\S+|"
        r"\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|ru|cn|xyz|info|biz|co|me|ly|sh|app|dev)/\S*",
        re.IGNORECASE)),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
]


@dataclass(frozen=True)
class Finding:
    field: str
    rule: str
    span: tuple[int, int]


def scan_text(text: str) -> list[tuple[str, tuple[int, int]]]:
    """(rule, span) for every instruction-shaped match in ``text``."""
    found = []
    for rule, pattern in RULES:
        for match in pattern.finditer(text):
            found.append((rule, match.span()))
    return found


def scan(entry: Entry) -> list[Finding]:
    texts = entry.shown_texts()
    texts.update({f"{name} (before truncation)": text for name, text in entry._raw_sources.items()})
    return [Finding(field, rule, span) for field, text in texts.items() for rule, span in scan_text(text)]


def reason_of(findings: list[Finding]) -> str:
    parts = dict.fromkeys(f"{f.rule} in {f.field}" for f in findings)
    return "instruction-shaped text: " + "; ".join(parts)


def apply_gate(entry: Entry, action: GateAction = "quarantine") -> Entry:
    """The entry as it may be stored: unchanged if clean, else quarantined or redacted (id recomputed)."""
    findings = scan(entry)
    if not findings:
        return entry
    if action == "redact" and not any(f.field.endswith("(before truncation)") for f in findings):
        redacted = _redact(entry, findings)
        if not scan(redacted):
            return redacted.with_content_id()
        findings = scan(redacted)
    prov = entry.provenance.model_copy(update={"trust": "quarantined", "trust_reason": reason_of(findings)})
    return entry.model_copy(update={"provenance": prov}).with_content_id()


_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?\n]|$)")


def _redact(entry: Entry, findings: list[Finding]) -> Entry:
    """Replace every sentence holding a finding by ``[redacted]``; record field, rule and a text hash."""
    by_field: dict[str, list[Finding]] = {}
    for finding in findings:
        by_field.setdefault(finding.field, []).append(finding)
    texts = entry.shown_texts()
    redactions = list(entry.provenance.redactions)
    new_texts: dict[str, str] = {}
    for field, items in by_field.items():
        text = texts[field]
        spans = _sentence_spans(text, [f.span for f in items])
        out, last = [], 0
        for start, end in spans:
            out.append(text[last:start] + "[redacted] ")
            redactions.append(Redaction(
                field=field, reason=", ".join(sorted({f.rule for f in items})),
                sha256=hashlib.sha256(text[start:end].encode()).hexdigest()))
            last = end
        out.append(text[last:])
        new_texts[field] = "".join(out).strip()
    update: dict = {k: v for k, v in new_texts.items() if not k.startswith("actions[")}
    if any(k.startswith("actions[") for k in new_texts):
        update["actions"] = [new_texts.get(f"actions[{i}]", a) for i, a in enumerate(entry.actions)]
    prov = entry.provenance.model_copy(update={
        "redactions": redactions,
        "trust_reason": "redacted " + reason_of(findings),
    })
    update["provenance"] = prov
    return entry.model_copy(update=update)


def _sentence_spans(text: str, hits: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The merged sentence spans (split on . ! ? and newlines, or WebShop's [SEP]) covering ``hits``."""
    bounds = []
    for match in _SENTENCE.finditer(text):
        if match.start() == match.end():
            continue
        for part in re.finditer(r"(?:(?!\[SEP\]).)+", match.group(0), flags=re.IGNORECASE | re.DOTALL):
            bounds.append((match.start() + part.start(), match.start() + part.end()))
    chosen: list[tuple[int, int]] = []
    for start, end in bounds:
        if any(s < end and e > start for s, e in hits):
            if chosen and chosen[-1][1] >= start:
                chosen[-1] = (chosen[-1][0], end)
            else:
                chosen.append((start, end))
    return chosen
