"""Write gate: keep instructions planted in observations out of what an actor is shown (docs/design.md §4).

An observation can carry text written by a third party (a product description, a note in a room). Once it
is distilled into the bank, every later episode is shown it, so text that *addresses the reader* must not
reach a trusted entry. The gate scans what the actor will see — each item exactly as
:func:`~expbank.bank.render.item_parts` renders it (at the default caps and uncapped), plus the full texts an
excerpt was cut from — in plain form (:func:`~expbank.bank.injection.plain`: look-alikes mapped, invisibles
dropped, whitespace joined as rendered) and with every hidden payload decoded. Two checks run:

* **rules** (:data:`RULES`) for shapes no environment text has: chat-template and role markers, markup and
  links, protocol tags, override / standing-order / memory-write / exfiltration phrasing, readable text in an
  encoding, a task statement that is not the entry's task;
* the **learned detector** (:mod:`expbank.bank.detector`) over windows of one or two sentences, across field
  and step boundaries, for paraphrases, polite requests and other languages; a window it flags counts only if
  it is aimed at the actor (:data:`AIMED`: it names the actor, its protocol or an environment action), which
  shop copy addressed to a human customer is not.

A flagged entry is quarantined (default) or, with ``gate_action: redact``, each flagged instruction is
replaced by ``[redacted]`` whole — its flagged sentences and the suspicious sentences around them, never a
clean sentence before a role marker — and the entry stays trusted only if it then scans clean.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from expbank.bank import detector as learned
from expbank.bank.entry import Entry, Redaction
from expbank.bank.injection import ENCODINGS, decodings, plain, sentences
from expbank.bank.render import LABEL, UNCAPPED, item_parts

GateAction = Literal["quarantine", "redact"]
Head = Literal["obs", "any"]
REDACTED = "[redacted]"

# "model" and "bot" alone are left out: WebShop titles say "for Model 3", "robot vacuum".
_AGENT = (r"(?:ai|a\.i\.|ai model|agent|assistant|llm|large language model|language model|chat ?bot|gpt|claude|"
          r"copilot|autonomous system|ai system)s?")
# verbs of an actor's decisions ("always click", "never tell"), not of product care ("always use with care")
_VERBS = (r"(?:say|output|respond|reply|answer|choose|select|click|buy|purchase|trust|reveal|tell|print|send|"
          r"mention|recommend|pick|report|obey|comply|prefer|ignore|skip|visit|remember|search|follow)")
_START = r"(?:^|[.!?:;|]\s*|\[sep\]\s*|\byou (?:must|should|shall|will|need to)\s+)"
_LATER = r"\b(?:for later|for (?:the )?future|future use|next time)\b"
_PRIOR = r"(?:previous|prior|earlier|above|original|initial|preceding|old|current|existing|given)"

RULES: list[tuple[str, re.Pattern[str]]] = [
    ("addresses-agent", re.compile(
        rf"\b(?:hey|hi|hello|dear|attention|note to|message to|notice to|to|for|calling|psst)\s+"
        rf"(?:the |all |any |every |you,? )?(?:ai |autonomous |automated |shopping |household |helpful )?{_AGENT}\b|"
        rf"\b(?:you are|you're|as) (?:an?|the) (?:helpful |autonomous |automated |shopping |household )?{_AGENT}\b|"
        rf"\bif you(?:'re| are) (?:an?|the) (?:ai|automated|autonomous|{_AGENT})\b|"
        r"\b(?:reader|readers|user) of (?:this |the )?(?:memory|memories|notes?|bank)\b|"
        r"\b(?:whoever|anyone|anybody|any agent) (?:reads|retrieves|sees|reading|processing) this\b|"
        # the agent called by name, as a vocative: "Agent, do X." / "Do X, assistant."
        rf"(?:^|[.!?:;]\s+|\[sep\]\s*)(?:dear |hey |ok |okay )?{_AGENT},\s|"
        rf",\s*(?:dear |my |the )?{_AGENT}\s*(?:[.!?]|$)",
        re.IGNORECASE)),
    # starts where the marker does, so redaction keeps the sentence before it
    ("role-marker", re.compile(
        r"(?:^|(?<=[.!?|\]>:;\n])|(?<=\[sep\]))\s*"
        r"(?P<marker>(?:system|assistant|developer|user|human|tool|ai|admin|operator|orchestrator)"
        r"(?: (?:message|notice|note|prompt|override|update))?\s*:)", re.IGNORECASE)),
    ("chat-template", re.compile(
        r"<\|[^|<>\s]{1,40}\|>|\[/?(?:inst|sys|system)\]|<</?sys>>|</?s>|<(?:start|end)_of_turn>|"
        r"^#{2,}\s*(?:instruction|system|response|assistant|user|input)\b|"
        r"(?<=\s)#{2,}\s*(?:instruction|system|response|assistant|user|input)\b|"
        r"\b(?:system|developer) (?:prompt|message|instructions?)\b|\bdeveloper mode\b",
        re.IGNORECASE)),
    ("markup", re.compile(
        r"<!--|-->|</?(?:experience|action|observe|retrieve|critique|reconstruct|system|user|assistant|tool|"
        r"instructions?|script|iframe|img|a|div|span|meta|style|link|form|input|hidden|prompt)\b[^>]{0,200}>|"
        r"!?\[[^\]\n]{1,200}\]\(\s*[^)\s]+[^)]*\)|^\[//\]:|"
        r"\|\s*(?:situation|source|guidance|outcome|from task)\s*:", re.IGNORECASE)),
    ("override", re.compile(
        r"\b(?:ignore|disregard|forget|override|bypass|discard|dismiss|set aside|pay no attention to|"
        r"drop|abandon|cancel|void|skip)\b[^.!?]{0,40}?"
        rf"\b(?:instructions?|prompts?|guidelines|directives?|directions|constraints|programming|"
        rf"{_PRIOR} (?:rules|task|goal|request|guidance|orders|text|message|context)|"
        rf"(?:your|the) (?:rules|task|goal|orders|guidance|training)|what you were told|everything above)\b|"
        r"\b(?:new|updated|revised|secret|hidden|real|true|actual|additional)\s+(?:instructions|directives?|orders|"
        r"prompt)\b|\b(?:instructions?|rules) (?:no longer apply|are (?:void|outdated|cancelled))\b|"
        r"\binstead(?:,)?\s+(?:you\s+)?(?:must|should|will|need to)\b|\b(?:do not|don't) tell\b",
        re.IGNORECASE)),
    # the same in other languages: a verb of ignoring or forgetting near instructions, rules or the task
    ("override", re.compile(
        r"(?:\b(?:ignora|ignore[sz]?|ignoriere|olvida|olvídate|oublie[zs]?|vergiss|dimentica|esqueça|negeer|"
        r"vergeet|zignoruj|zapomnij|игнорируй|забудь|ігноруй|yok say|unut|bỏ qua|quên|abaikan|lupakan|"
        r"ignorera|glöm)\b|忽略|忘记|無視|忘れ|무시|잊어|تجاهل|انس|अनदेखा|भूल)[^.!?。！？]{0,40}?"
        r"(?:instrucc|regla|tarea|instruction|règle|tâche|anweisung|regel|aufgabe|istruzion|regol|compito|"
        r"instruç|regra|tarefa|instructie|taak|instrukcj|zasad|zadani|инструкц|правил|задач|інструкц|talimat|"
        r"kural|görev|hướng dẫn|quy tắc|nhiệm vụ|instruksi|aturan|tugas|instruktion|uppgift|指令|指示|规则|任务|"
        r"ルール|タスク|지시|규칙|작업|التعليمات|قواعد|مهمة|निर्देश|नियम|काम)", re.IGNORECASE)),
    ("task-override", re.compile(
        r"\b(?:your|the) (?:real|true|actual|secret|hidden|new|updated|revised|only|primary|correct) "
        r"(?:task|objective|goal|mission|job|purpose|assignment|instructions?)\b|"
        r"\b(?:task|goal|objective|instruction|request) (?:has|have) (?:been )?(?:changed|updated|revised)\b|"
        r"\b(?:new|updated) (?:task|objective|goal|mission)\s*:", re.IGNORECASE)),
    ("standing-order", re.compile(
        rf"{_START}(?:always|never)\s+(?:\w+\s+){{0,1}}{_VERBS}\b|"
        r"\bfrom (?:now on|this (?:point|moment) on)\b|\bgoing forward\b|\bhenceforth\b|"
        r"\b(?:in|for|during) (?:all |every |any |each )?(?:future|subsequent|later|upcoming|next|other) "
        r"(?:tasks?|episodes?|runs?|sessions?|conversations?|queries|requests|shopping trips|games?)\b|"
        r"\bwhenever you (?:start|begin|see|read|get|are given)\b", re.IGNORECASE)),
    # "for later" and "next time" alone are shop and label copy ("save for later", "retain for future
    # reference", "remember to reorder next time"): they count after a verb of the mind or with a rule's words.
    ("memory-write", re.compile(
        r"\b(?:remember|memori[sz]e|store|save|record|retain|keep|note|commit|write down|note down|log)\b"
        r"[^.!?]{0,40}?\b(?:memory|memories|notes|bank|forever|permanently|"
        r"(?:standing|permanent|general) (?:rule|instruction)|in mind for)\b|"
        r"\b(?:remember|memori[sz]e)\b(?! to\b)[^.!?]{0,40}?" + _LATER + "|"
        r"\b(?:store|save|record|retain|keep|note|write down|note down|log)\b[^.!?]{0,40}?"
        r"\b(?:rules?|lessons?|advice|guidance|polic(?:y|ies)|principles?|tips?|tricks?|"
        r"the following|this:)[^.!?]{0,40}?" + _LATER + "|"
        r"\b(?:add|write|put|insert|save|store)\b[^.!?]{0,30}?\b(?:to|into|in) (?:your|the|their) "
        r"(?:memory|memories|notes|memory bank|knowledge base|context|experience)\b",
        re.IGNORECASE)),
    ("exfiltration", re.compile(
        r"\b(?:reveal|print|output|repeat|disclose|leak|send|forward|share|type|copy|tell me|upload|transmit|"
        r"e-?mail)\b[^.!?]{0,40}?\b(?:system prompt|(?:your|hidden|secret) (?:instructions|prompt|rules)|"
        r"api key|password|credentials?|secret token|token you|conversation(?: history)?|chat history|"
        r"(?:your|the) memory|card number|(?:user's|shopper's|customer's) (?:address|data|details))\b",
        re.IGNORECASE)),
    ("url", re.compile(
        r"\b(?:https?|ftp|file|javascript|data):/?/?\S+|\bwww\.[\w-]+\.\S+|"
        r"\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|ru|cn|xyz|info|biz|co|me|ly|sh|app|dev|shop|top|site|"
        r"online|store|link|click|example|invalid)/\S*", re.IGNORECASE)),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
]
# ALFWorld's object and receptacle classes, lower-cased (alfworld.gen.constants OBJECTS and RECEPTACLES; a test
# keeps them equal): the nouns a household action names.
ALFWORLD_CLASSES = (
    "alarmclock apple armchair baseballbat basketball bathtub bathtubbasin bed blinds book boots bowl box bread "
    "butterknife cabinet candle cart cd cellphone chair cloth coffeemachine coffeetable countertop creditcard cup "
    "curtains desk desklamp diningtable dishsponge drawer dresser egg floorlamp footstool fork fridge garbagecan "
    "glassbottle handtowel handtowelholder houseplant kettle keychain knife ladle laptop laundryhamper "
    "laundryhamperlid lettuce lightswitch microwave mirror mug newspaper ottoman painting paintinghanger pan "
    "papertowel papertowelroll pen pencil peppershaker pillow plate plunger poster pot potato remotecontrol safe "
    "saltshaker scrubbrush shelf showerdoor showerglass sidetable sink sinkbasin soapbar soapbottle sofa spatula "
    "spoon spraybottle statue stoveburner stoveknob teddybear television tennisracket tissuebox toaster toilet "
    "toiletpaper toiletpaperhanger toiletpaperroll tomato towel towelholder tvstand vase watch wateringcan window "
    "winebottle").split()
_L, _R = r"(?<![a-z])", r"(?![a-z])"  # word edges that hold next to CJK text too ("今すぐchoose the item")
# a word after a determiner is a noun ("your order", "the drawer"), not the verb of an instruction
_NOT_NOUN = "".join(f"(?<!{d} )" for d in "a an the your my our their this that its his her one".split())
_ALF_NOUN = ("(?:" + "|".join(sorted(ALFWORLD_CLASSES, key=len, reverse=True))
             + r"|garbage can|trash|bin|floor)s?")
_ALF_VERB = (r"(?:go|goes|going|walk|head|take|taking|put|putting|place|move|drop|throw|toss|open|close|toggle|"
             r"turn|switch|heat|cool|clean|wash|slice|cut|examine|use|carry|leave|bring|pick|grab|hold|fetch|get|"
             r"stay|look|inspect|empty|dump)")
# WebShop's actions are search[...] and click[...]: the verbs a shopper's decision takes, and what they act on
_SHOP_VERB = (r"(?:buy|buying|purchase|click|clicking|search|searching|select|choose|pick|add|order|type|rate|"
              r"pay|recommend|go back|checkout|check out|tap|press|hit|open)")
_SHOP_TARGET = (r"(?:items?|products?|results?|listings?|options?|buttons?|pages?|search box|gift cards?|bundle|"
                r"seller|sizes?|colou?rs?|price|asin|cheapest|(?:most )?expensive|priciest|sponsored|first match|"
                r"buy now|next|prev|back to search|order|cart|shipping|everything|b0[0-9a-z]{8})")
_PROTOCOL = (r"(?:tasks?|instructions?|rules?|goals?|episodes?|missions?|objectives?|directives?|prompts?|memory|"
             r"memories|(?:next|your) (?:action|step|move|turn)s?|actions?|the user|the shopper|the operator|"
             r"requested|whoever|succe(?:ss|eded)|done|(?:every|each) step|price limit|budget|"
             r"your (?:answer|response|output|score)|score)")
_AGENT_WORLD = (r"(?:asistente|assistent|assistente|asystent|ассистент|агент|agente|agenten|asistan|trợ lý|助手|"
                r"智能体|アシスタント|エージェント|어시스턴트|에이전트|المساعد|الوكيل|सहायक|एजेंट)")
#: What a window the detector flags must name to count as an instruction to the actor: the actor or its
#: protocol (task, goal, episode, memory, its answer or score), or an action in an environment's action space
#: (a household verb with a household object, a shop verb with a shop control). Imperative copy aimed at a
#: human customer ("Reply STOP to unsubscribe", "Cancel your plan anytime") names none of them.
AIMED = re.compile(
    rf"{_L}(?:{_AGENT}|bot|robot|automation|automated|autonomous|reader|{_PROTOCOL}){_R}|{_AGENT_WORLD}|"
    rf"{_L}{_NOT_NOUN}{_ALF_VERB}{_R}[^.!?]{{0,40}}?{_L}{_ALF_NOUN}{_R}|"
    rf"{_L}{_NOT_NOUN}{_SHOP_VERB}{_R}[^.!?]{{0,40}}?{_L}{_SHOP_TARGET}{_R}", re.IGNORECASE)
_ROLE = dict(RULES)["role-marker"]
_TASK_MARKER = re.compile(r"\b(?:your task is to|instruction|task)\s*:\s*(?:\[sep\]\s*)?", re.IGNORECASE)
_WORDS = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Finding:
    field: str
    rule: str
    span: tuple[int, int]


def scan_text(text: str, task: str | None = None, head: Head = "any", detector: learned.Detector | None = None,
              env: str | None = None) -> list[tuple[str, tuple[int, int]]]:
    """(rule, span) for everything instruction-shaped in one text (spans index its plain form): ``head`` ``obs``
    scores it as observation text, ``env`` applies that environment's cut, ``detector`` replaces the shipped
    one (evaluation)."""
    found = _scan_pieces([[[("text", head, text)]]], [task], detector, [env])[0]
    return [(f.rule, f.span) for f in found]


def scan_texts(texts: list[str], head: Head = "any", detector: learned.Detector | None = None,
               env: str | None = None) -> list[list[tuple[str, tuple[int, int]]]]:
    """:func:`scan_text` for many texts with one batched detector call."""
    found = _scan_pieces([[[("text", head, text)]] for text in texts], [None] * len(texts), detector,
                         [env] * len(texts))
    return [[(f.rule, f.span) for f in findings] for findings in found]


def scan(entry: Entry) -> list[Finding]:
    """Every finding in what ``entry`` would show an actor."""
    return scan_entries([entry])[0]


def scan_entries(entries: list[Entry]) -> list[list[Finding]]:
    """:func:`scan` for many entries with one batched detector call."""
    return _scan_pieces([_sequences(entry) for entry in entries], [entry.task for entry in entries],
                        envs=[entry.env for entry in entries])


def reason_of(findings: list[Finding]) -> str:
    parts = dict.fromkeys(f"{f.rule} in {f.field}" for f in findings)
    return "instruction-shaped text: " + "; ".join(parts)


def apply_gate(entry: Entry, action: GateAction = "quarantine") -> Entry:
    """The entry as it may be stored: unchanged if clean, else quarantined or redacted (id recomputed)."""
    return gate_entries([entry], action)[0]


def gate_entries(entries: Iterable[Entry], action: GateAction = "quarantine") -> list[Entry]:
    """:func:`apply_gate` for a batch (one detector call per pass): what ``Bank.add`` should call."""
    entries = list(entries)
    out = list(entries)
    flagged = [(i, f) for i, f in enumerate(scan_entries(entries)) if f]
    if action == "redact":
        candidates = [(i, _redact(entries[i], f)) for i, f in flagged
                      if not any(x.field.endswith("(before truncation)") for x in f)]
        rescans = scan_entries([e for _, e in candidates])
        for (i, redacted), findings in zip(candidates, rescans, strict=True):
            if not findings:
                out[i] = redacted.with_content_id()
        flagged = [(i, f) for i, f in flagged if out[i] is entries[i]]
    for i, findings in flagged:
        prov = entries[i].provenance.model_copy(update={"trust": "quarantined", "trust_reason": reason_of(findings)})
        out[i] = entries[i].model_copy(update={"provenance": prov}).with_content_id()
    return out


# ------------------------------------------------------------------------------------------- scanning

Piece = tuple[str, Head, str]  # (field, head, raw text)


#: Detector cut (share of the threshold) by environment. ALFWorld observations are engine text with no
#: third-party copy, so anything instruction-like in them is foreign: a lower cut costs no false positive
#: there. WebShop pages carry marketing, so they keep the full threshold.
CUTS = {"alfworld": 0.625}


def _cut(env: str | None) -> float:
    return CUTS.get(env or "", 1.0)


def _head(field: str) -> Head:
    return "obs" if field == "source_observation" or field.endswith("observation (before truncation)") else "any"


def _sequences(entry: Entry) -> list[list[Piece]]:
    """What the actor can be shown, as sequences of pieces whose windows run across piece boundaries:
    the rendered item at the default caps and uncapped, and each full text an excerpt was cut from."""
    out = []
    for caps in ((200, 256), (UNCAPPED, UNCAPPED)):
        out.append([(field, _head(field), text) for field, text in item_parts(entry, *caps) if field != LABEL])
    for name, text in entry._raw_sources.items():
        field = f"{name} (before truncation)"
        out.append([(field, _head(field), text)])
    return out


def _scan_pieces(batch: list[list[list[Piece]]], tasks: list[str | None],
                 detector: learned.Detector | None = None, envs: list[str | None] | None = None,
                 ) -> list[list[Finding]]:
    """Rules and decodings per piece, then one detector call for every window (windows run across pieces)."""
    cuts = [_cut(env) for env in envs or [None] * len(batch)]
    findings: list[list[Finding]] = [[] for _ in batch]
    queries: dict[tuple[learned.Window, Head], list[tuple[int, str]]] = {}
    for b, (sequences_, task) in enumerate(zip(batch, tasks, strict=True)):
        for sequence in sequences_:
            for field, _, text in sequence:
                for kind, hidden in decodings(text):
                    if kind in ENCODINGS:
                        findings[b].append(Finding(field, f"encoded-text ({kind})", (0, len(hidden))))
                    findings[b] += _rules(hidden, field, None)
                    for window in learned.windows([hidden]):
                        queries.setdefault((window, "obs"), []).append((b, field))
            flat = [(field, head, plain(text)) for field, head, text in sequence]
            for field, head, text in flat:  # only the environment states the task; summaries paraphrase it
                findings[b] += _rules(text, field, task if head == "obs" else None)
            for window, field, head in _windows(flat):
                queries.setdefault((window, head), []).append((b, field))
    detector = detector or learned.load()
    for head in ("obs", "any"):
        texts = [w for (w, h) in queries if h == head]
        for text, share in zip(texts, detector.shares(texts, head) if texts else [], strict=True):
            over = [(b, field) for b, field in queries[(text, head)] if share >= cuts[b]]
            if over and _aimed(text):  # once per window, however many entries share it
                for b, field in over:
                    findings[b].append(Finding(field, "detector", (0, len(text))))
    return [list(dict.fromkeys(f)) for f in findings]


def _windows(flat: list[Piece]) -> list[tuple[learned.Window, str, Head]]:
    """(window, field, head): each sentence with its piece's head; pairs across pieces use ``any`` unless
    both halves are observation text."""
    units = [(s, field, head) for field, head, text in flat for s in sentences(text)]
    out = [((s,), field, head) for s, field, head in units]
    for (a, fa, ha), (b, fb, hb) in zip(units, units[1:], strict=False):
        out.append(((a, b), fa if fa == fb else f"{fa}+{fb}", "obs" if ha == hb == "obs" else "any"))
    return out


def _rules(text: str, field: str, task: str | None) -> list[Finding]:
    found = []
    for rule, pattern in RULES:
        for match in pattern.finditer(text):
            start = match.start("marker") if "marker" in pattern.groupindex else match.start()
            found.append(Finding(field, rule, (start, match.end())))
    if task:
        found += [Finding(field, "task-mismatch", span) for span in _foreign_tasks(text, task)]
    return found


def _foreign_tasks(text: str, task: str) -> list[tuple[int, int]]:
    """Spans of task statements ("Your task is to:", "Instruction:", "Task:") that are not ``task``."""
    goal = _WORDS.findall(plain(task).lower())
    spans = []
    for match in _TASK_MARKER.finditer(text):
        tail = text[match.end():match.end() + 200]
        stated = _WORDS.findall(tail.lower())
        if tail.rstrip().rstrip("'\"").endswith(("…", "...")) and match.end() + 200 >= len(text):
            stated = stated[:-1]  # a capped source ends mid-word ("put a apple in cou…"; NFKC makes it "...")
        k = min(len(goal), len(stated), 8)
        if k and stated[:k] != goal[:k]:
            spans.append((match.start(), min(match.end() + 80, len(text))))
    return spans


# ------------------------------------------------------------------------------------------- redaction

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\s*\[SEP\]\s*", re.IGNORECASE)
CONTEXT = 0.3  # a neighbour of a flagged sentence is part of the instruction from this share of a threshold


def _redact(entry: Entry, findings: list[Finding]) -> Entry:
    """Replace each flagged instruction by ``[redacted]`` in the stored fields; record field, rule, hash."""
    fields = {"task": entry.task, "situation": entry.situation, "source_observation": entry.source_observation,
              "guidance": entry.guidance, **{f"actions[{i}]": a for i, a in enumerate(entry.actions)}}
    redactions = list(entry.provenance.redactions)
    update: dict = {}
    for name, text in fields.items():
        spans = _instruction_spans(text, _head(name), entry.task, _cut(entry.env))
        if not spans:
            continue
        out, last = [], 0
        for start, end, reason in spans:
            out.append(text[last:start] + REDACTED)
            redactions.append(Redaction(field=name, reason=reason,
                                        sha256=hashlib.sha256(text[start:end].encode()).hexdigest()))
            last = end
        update[name] = "".join(out + [text[last:]]).strip()
    if any(k.startswith("actions[") for k in update):
        update["actions"] = [update.pop(f"actions[{i}]", a) for i, a in enumerate(entry.actions)]
    update["provenance"] = entry.provenance.model_copy(update={
        "redactions": redactions, "trust_reason": "redacted " + reason_of(findings)})
    return entry.model_copy(update=update)


def _instruction_spans(text: str, head: Head, task: str, cut: float = 1.0) -> list[tuple[int, int, str]]:
    """Merged (start, end, rules) spans of whole instructions in ``text``: flagged sentences (a role marker
    counts from the marker on), grown over neighbouring sentences the detector finds suspicious."""
    bounds, last = [], 0
    for match in _SENTENCE_END.finditer(text):
        if match.start() > last:
            bounds.append((last, match.start()))
        last = match.end()
    if last < len(text):
        bounds.append((last, len(text)))
    if not bounds:
        return []
    plains = [plain(text[s:e]) for s, e in bounds]
    reasons: list[set[str]] = [set() for _ in bounds]
    starts = [s for s, _ in bounds]
    for i, sentence in enumerate(plains):
        for finding in _rules(sentence, "", task if head == "obs" else None):
            reasons[i].add(finding.rule)
            marker = _ROLE.search(text, bounds[i][0], bounds[i][1])
            if finding.rule == "role-marker" and marker:
                starts[i] = marker.start("marker")
        for kind, hidden in decodings(text[bounds[i][0]:bounds[i][1]]):
            if kind in ENCODINGS or _rules(hidden, "", None):
                reasons[i].add(f"encoded-text ({kind})")
    pairs = list(zip(plains, plains[1:], strict=False))
    suspicion = _suspicion([(p,) for p in plains] + pairs, head)
    single, joint = suspicion[:len(plains)], suspicion[len(plains):]
    for i, score in enumerate(single):
        if score >= cut and _aimed((plains[i],)):
            reasons[i].add("detector")
    for i, score in enumerate(joint):
        if score >= cut and not (reasons[i] or reasons[i + 1]) and _aimed(pairs[i]):
            reasons[i].add("detector")
            reasons[i + 1].add("detector")
    chosen = [bool(r) for r in reasons]
    grow = True
    while grow:
        grow = False
        for i in range(len(bounds)):
            if not chosen[i] and single[i] >= CONTEXT * cut and (
                    (i > 0 and chosen[i - 1]) or (i + 1 < len(bounds) and chosen[i + 1])):
                chosen[i], grow = True, True
    spans: list[tuple[int, int, str]] = []
    for i, (start, end) in enumerate(bounds):
        if not chosen[i]:
            continue
        start = starts[i]
        why = ", ".join(sorted(reasons[i])) or "detector context"
        if spans and chosen[i - 1]:
            prev = spans[-1]
            spans[-1] = (prev[0], end, ", ".join(sorted(set(prev[2].split(", ")) | set(why.split(", ")))))
        else:
            spans.append((start, end, why))
    return spans


def _aimed(window: learned.Window) -> bool:
    """Whether a window names the actor, its protocol or an environment action (:data:`AIMED`)."""
    return AIMED.search(" ".join(window)) is not None


def _suspicion(texts: list[learned.Window], head: Head) -> list[float]:
    """Each text's detector score as a share of its threshold (1.0 = flagged)."""
    return learned.load().shares(texts, head).tolist() if texts else []
