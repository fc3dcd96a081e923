"""The text embedded for the ``task`` key.

MiniLM ranks ALFWorld goals by their nouns, not by what has to be done: measured cosines are
"put a hot potato in countertop." ~ "put a potato in countertop." 0.94 but ~ "heat some potato and put it
in countertop." 0.91, and "heat some cup …" lands nearer "cool some bowl …" or "put a cool cup …" than
"heat some bread …". The task key is meant to find entries of the same kind of task, so ALFWorld goals
(a closed set of 12 templates, two phrasings for each of six task types) are rewritten to one phrasing per
type with the object and receptacle replaced by placeholders. The nouns still count through the
``situation`` key, and ``entry.task`` keeps the original goal. Other text (WebShop instructions, free
queries) is embedded unchanged.
"""

from __future__ import annotations

import re

_OBJ = r"(?P<obj>[\w-]+)"
_RECEP = r"(?P<recep>[\w-]+)"
_ALFWORLD_GOALS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"^put (?:a|an|some) (?:clean|washed) {_OBJ} (?:in|on|in/on) {_RECEP}$"), "clean"),
    (re.compile(rf"^clean (?:a|an|some|the) {_OBJ} and put it (?:in|on|in/on) {_RECEP}$"), "clean"),
    (re.compile(rf"^put (?:a|an|some) (?:hot|heated) {_OBJ} (?:in|on|in/on) {_RECEP}$"), "heat"),
    (re.compile(rf"^heat (?:a|an|some|the) {_OBJ} and put it (?:in|on|in/on) {_RECEP}$"), "heat"),
    (re.compile(rf"^put (?:a|an|some) (?:cool|cold|cooled) {_OBJ} (?:in|on|in/on) {_RECEP}$"), "cool"),
    (re.compile(rf"^cool (?:a|an|some|the) {_OBJ} and put it (?:in|on|in/on) {_RECEP}$"), "cool"),
    (re.compile(rf"^put two {_OBJ} (?:in|on|in/on) {_RECEP}$"), "two"),
    (re.compile(rf"^find two {_OBJ} and put them (?:in|on|in/on) {_RECEP}$"), "two"),
    (re.compile(rf"^look at (?:a |an |the )?{_OBJ} under the {_RECEP}$"), "look"),
    (re.compile(rf"^examine (?:a |an |the )?{_OBJ} with the {_RECEP}$"), "look"),
    (re.compile(rf"^put (?:a|an|some) {_OBJ} (?:in|on|in/on) {_RECEP}$"), "place"),
]
_CANONICAL = {
    "place": "put some object in the receptacle.",
    "clean": "clean some object with water and then put it in the receptacle.",
    "heat": "heat some object in the microwave and then put it in the receptacle.",
    "cool": "cool some object in the fridge and then put it in the receptacle.",
    "two": "find two objects, one after the other, and put both of them in the receptacle.",
    "look": "look at some object under the lamp, holding it while turning on the lamp.",
}


def task_key_text(task: str) -> str:
    """The text whose embedding is the task key of ``task`` (see the module docstring)."""
    goal = " ".join(task.lower().split()).rstrip(".").strip()
    goal = goal.removeprefix("your task is to:").strip()
    for pattern, family in _ALFWORLD_GOALS:
        if pattern.match(goal):
            return _CANONICAL[family]
    return task
