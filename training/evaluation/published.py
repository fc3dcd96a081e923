"""Published numbers of other systems, shown only in their own table and labelled as theirs.

Each row names the paper or repository it was read from (source tags: [S] secondary summary, [P] primary
repository or paper figure, ×N = agreeing sources).
Protocols differ from ours and from each other (splits, sample sizes, checkpoint selection, "All" vs
unweighted "Avg."), so these rows are context, never a column next to our results.
"""

from __future__ import annotations

from typing import NamedTuple


class Published(NamedTuple):
    system: str
    model: str
    success: str  # as published, with its own aggregate ("All", "Avg." ...)
    score: str  # WebShop score (mean reward × 100); "—" for ALFWorld
    protocol: str
    source: str


VERL_AGENT_ALFWORLD = "verl-agent val (eval_in_distribution; example scripts: 128 envs, temperature 0.4); 'All'"
VERL_AGENT_WEBSHOP = "verl-agent defaults: goals 0–499 of the 1k-product small catalogue, synthetic goals"
FULL_WEBSHOP = "full WebShop benchmark, 500 human test goals"

PUBLISHED: dict[str, list[Published]] = {
    "alfworld": [
        Published("GRPO", "Qwen2.5-1.5B-Instruct", "All 72.8 ± 3.6", "—", VERL_AGENT_ALFWORLD, "GiGPO Table 1 [S×3]"),
        Published("GiGPO w/ std", "Qwen2.5-1.5B-Instruct", "All 86.7 ± 1.7", "—", VERL_AGENT_ALFWORLD,
                  "GiGPO Table 1 [S×3]; verl-agent README [P]"),
        Published("GRPO", "Qwen2.5-7B-Instruct", "All 77.6 ± 5.2 (Avg. 76.4)", "—", VERL_AGENT_ALFWORLD,
                  "GiGPO Table 1 [S×3]"),
        Published("GiGPO w/ std", "Qwen2.5-7B-Instruct", "All 90.8 ± 1.3 (Avg. 88.6)", "—", VERL_AGENT_ALFWORLD,
                  "GiGPO Table 1 [S×3]; verl-agent README [P]"),
        Published("SLEA-RL", "Qwen2.5-7B-Instruct", "All 93.5 (Avg. 93.9)", "—", VERL_AGENT_ALFWORLD,
                  "SLEA-RL (2603.18079) Tables 1/4 [S]"),
        Published("MemHarness", "Qwen2.5-7B-Instruct", "Avg. 85.2 (unweighted over six types)", "—",
                  "valid_seen, 140 games; best-validation checkpoint selected on the same split",
                  "MemHarness README and assets/main_results.png [P]"),
        Published("MemHarness (OOD)", "Qwen2.5-7B-Instruct", "Avg. 85.9 (unweighted over six types)", "—",
                  "valid_unseen, 134 games", "MemHarness assets/ood_results.png [P]"),
        Published("ReAct (best of 6 prompts)", "PaLM-540B", "71 (avg. of prompts 57)", "—",
                  "valid_unseen, 134 games, few-shot prompting", "ReAct Table 3 [S×3]"),
        Published("ExpeL (full)", "gpt-3.5-turbo actor, gpt-4 insights", "≈59.0", "—",
                  "valid_unseen, 134 games; read from a figure", "ExpeL Fig. 5 and Table 2 [S]"),
    ],
    "webshop": [
        Published("GRPO", "Qwen2.5-1.5B-Instruct", "56.8", "75.8", VERL_AGENT_WEBSHOP, "GiGPO Table 1 [S×3]"),
        Published("GiGPO w/ std", "Qwen2.5-1.5B-Instruct", "65.0 ± 3.2", "83.1", VERL_AGENT_WEBSHOP,
                  "GiGPO Table 1 [S×3]"),
        Published("GRPO", "Qwen2.5-7B-Instruct", "66.1", "79.3", VERL_AGENT_WEBSHOP, "GiGPO Table 1 [S×3]"),
        Published("GiGPO w/ std", "Qwen2.5-7B-Instruct", "72.8", "84.4", VERL_AGENT_WEBSHOP, "GiGPO Table 1 [S×3]"),
        Published("MemHarness", "Qwen2.5-7B-Instruct", "75.6", "87.4", VERL_AGENT_WEBSHOP + "; val_data_size=250",
                  "MemHarness README and figure [P]"),
        Published("ReAct (one-shot)", "PaLM-540B", "40.0", "66.6", FULL_WEBSHOP, "ReAct Table 4 [S×4]"),
        Published("IL (WebShop paper)", "—", "29.1", "59.9", FULL_WEBSHOP, "WebShop paper [S×4]"),
        Published("Human expert", "—", "59.6", "82.1", FULL_WEBSHOP, "WebShop paper [S×4]"),
    ],
}


def render_published(env: str) -> str:
    """A Markdown section of published numbers for ``env``, headed as theirs and not comparable as is."""
    rows = PUBLISHED.get(env, [])
    lines = [
        "## Published results of other systems (theirs, not ours)",
        "",
        "Numbers as their authors report them, under their own protocols; they were not produced by this run "
        "and are not on our panel. Read the protocol column before setting any of them next to ours.",
        "",
        "| system | model | success % (as published) | score | protocol | source |",
        "|---|---|---|---|---|---|",
    ]
    lines += [f"| {r.system} | {r.model} | {r.success} | {r.score} | {r.protocol} | {r.source} |" for r in rows]
    if not rows:
        lines.append(f"| (none recorded for {env}) | | | | | |")
    return "\n".join(lines)
