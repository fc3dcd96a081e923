"""A scripted frozen actor that does what the bank says: for measuring the bank itself, with no model in the loop.

It plays the households family (``envs/alfworld/households.py``) the way a retrieval-following frontier model
would, from the step message alone:

1. holding the food next to the garbage can: put it there; holding it elsewhere: go to the garbage can;
2. the food in sight: take it; a closed receptacle here: open it;
3. once the ``<experience>`` block names a take of this food: the first place its takes name that it can go
   to and has not been to (of any food: an entry of the room shows where its other foods lay too; a take is
   a fact of the room whatever the episode's outcome), unless a warning of this room says the food was not
   there;
4. otherwise a receptacle not visited yet, the request's ``seed`` choosing which, first among those no
   warning of this room rules out ("The apple was not in/on desk 1 here …", for a situation that names
   this room's receptacles).

Served as an OpenAI-compatible chat endpoint (:meth:`Follower.served`), it runs through ``actor.backend:
openai`` exactly as a model behind an API would; every reply carries the tags the bank protocol expects. It is
the follower ``tests/test_online_eval.py`` and ``scripts/bench_stale_memory.py`` play.
"""

from __future__ import annotations

import contextlib
import re

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from expbank.bank.store import named_things
from expbank.bank.summarise import NOT_FOUND
from expbank.training.actors.serve_model import serving

TARGET = "garbagecan 1"


def follow(user: str, seed: int) -> str:
    """The action for one step's user message; ``seed`` picks where to look when nothing says where."""
    food = re.search(r"Task: put (?:a|an|some) (\w+)", user).group(1)
    admissible = user.split("Admissible actions:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    history = re.findall(r"> action: (.+)", user)
    for action in admissible:
        if action == f"move {food} 1 to {TARGET}":
            return action
    if history and history[-1].startswith("take "):
        return f"go to {TARGET}"
    for action in admissible:
        if action.startswith((f"take {food} 1 from", "open ")):
            return action
    ruled_out = {f"go to {place}" for place in ruled_out_places(user, food)}
    for place in remembered_places(user, food):
        go = f"go to {place}"
        if go in admissible and go not in ruled_out and go not in history:
            return go
    unseen = [a for a in admissible if a.startswith("go to ") and TARGET not in a and a not in history]
    unseen = [a for a in unseen if a not in ruled_out] or unseen
    return unseen[seed % len(unseen)] if unseen else admissible[0]


def remembered_places(user: str, food: str) -> list[str]:
    """The places the takes after ``<experience>`` name, in order, once one of them takes ``food`` (none
    before): an item of this room shows where its other foods lay too."""
    experience = user.split("<experience>", 1)[1] if "<experience>" in user else ""
    return re.findall(r"take \w+ 1 from ([\w ]+?\d+)", experience) if f"take {food} 1" in experience else []


def ruled_out_places(user: str, food: str) -> set[str]:
    """The places the not-found warnings after ``<experience>`` say ``food`` was not at, counting only
    warnings written in this room (their situation names the receptacles its first observation names)."""
    head, _, experience = user.partition("<experience>")
    first = re.search(r"You are in the middle of a room\.[^\n]*", head)
    room = named_things(first[0]) if first else None
    places: set[str] = set()
    for item in experience.split("\n"):
        guidance = item.partition(" | guidance: ")[2]
        warning = NOT_FOUND.match(guidance)
        if warning and warning[1] == food and named_things(item.split(" | ")[0]) == room:
            places.update(re.findall(r"go to ([\w ]+?\d+)", guidance.partition("Failed actions:")[2]))
    return places


class Follower:
    """The follower as a chat-completions server; ``requests`` counts the calls it answered."""

    def __init__(self) -> None:
        self.requests = 0

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> JSONResponse:
            self.requests += 1
            body = await request.json()
            action = follow(body["messages"][-1]["content"], body.get("seed") or 0)
            content = f"<observe>x</observe><critique>NONE</critique><reconstruct>NONE</reconstruct><action>{action}"
            return JSONResponse({"id": "x", "object": "chat.completion", "created": 0, "model": "follower",
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": content}}],
                                 "usage": {"prompt_tokens": 1, "completion_tokens": 1}})

        return app

    def served(self) -> contextlib.AbstractContextManager[str]:
        """A context manager: the follower served on loopback, yielding its base URL (``http://127.0.0.1:PORT``)."""
        return serving(self.app())
