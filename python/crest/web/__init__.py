"""The browser side of crest: the live page of a run in progress (`--ui`) and the results browser
(`crest ui`), one small Starlette app served by uvicorn in a thread beside the command.

Owns the pages, their event stream and the token that guards them; reads the observe hub's frames and the
results store (read-only), builds pages from crest.report's documents. Never prints (the CLI prints the
URL), never measures, never writes the store.
"""
