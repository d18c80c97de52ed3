"""The live page: a run as it happens, drawn in the browser from the hub's frames.

The frames reach the page as server-sent events through sse-starlette's EventSourceResponse, not a
WebSocket: the stream only flows one way; EventSource reconnects by itself after a dropped connection and
then sends Last-Event-ID, the number of the last frame it got, which goes straight to `Hub.since(n)`, so a
reconnect resumes where it broke off and a reload (a new EventSource, no id) replays the whole history.
sse-starlette adds what a hand-written stream would have to: keep-alive pings (comment lines, so a quiet
stream between mixes is not dropped by a proxy or a browser's idle timer), noticing a client that went
away (its generator is cancelled, not left polling), and ending streams when the server shuts down.

Once the hub is closed and every frame was sent, an `end` event tells the page the command is done (the
process may exit right after; the page keeps what it drew).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from crest.observe.hub import Hub
from crest.web.pages import page
from crest.web.state import State

# How often an open stream looks for new frames: a sample comes once a second, so a quarter second keeps
# the page within one of the run and costs a lock and a comparison when nothing is new.
POLL_S = 0.25
# EventSource's wait before it reconnects (ms), sent once with the first event.
RETRY_MS = 1000


def routes(state: State) -> list[BaseRoute]:
    async def live_page(request: Request) -> Response:
        if state.hub is None:
            return page("nolive.html.j2", status_code=404, db=state.db is not None, hub=False)
        return page("live.html.j2", db=state.db is not None, hub=True)

    async def events(request: Request) -> Response:
        if state.hub is None:
            return Response("no run in this process\n", status_code=404, media_type="text/plain")
        seen = _seen(request.headers.get("last-event-id") or request.query_params.get("since"))
        return EventSourceResponse(stream(state.hub, seen, state), ping=5)

    return [Route("/live", live_page), Route("/live/events", events)]


async def stream(hub: Hub, seen: int, state: State) -> AsyncIterator[ServerSentEvent]:
    """Every frame numbered above `seen` as a `frame` event (its number the event id), then whatever follows,
    until the hub is closed and drained (an `end` event) or the server stops."""
    first = True
    state.opened(1)
    try:
        while True:
            closed = hub.closed  # read before the frames: a frame published before close is never missed
            for number, frame in hub.since(seen):
                yield ServerSentEvent(
                    data=json.dumps(frame, separators=(",", ":")), event="frame", id=str(number),
                    retry=RETRY_MS if first else None,
                )  # fmt: skip
                first = False
                seen = number
                # Back to the loop between frames: a browser that went away while a burst was due (a reload,
                # a closed tab) is then noticed after one failed write, not written to for the rest of the
                # burst (asyncio logs "socket.send() raised exception." for each write past the fifth).
                await asyncio.sleep(0)
            if closed and hub.last_number() <= seen:
                yield ServerSentEvent(data=json.dumps({"frames": seen}), event="end", id=str(seen))
                return
            if state.stopping.is_set():
                return
            await asyncio.sleep(POLL_S)
    finally:
        state.opened(-1)


def _seen(value: str | None) -> int:
    """The frame number a returning browser last got (Last-Event-ID); 0 (everything) when absent or not one."""
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0
