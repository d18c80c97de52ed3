"""The pages' Jinja environment: autoescaped templates of templates/, with the report's number formats."""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2
from starlette.responses import HTMLResponse

from crest.report import fmt


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("crest.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(rps=fmt.rps, when=fmt.when, ms=fmt.ms)
    return env


def page(template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
    """A template rendered as a page."""
    return HTMLResponse(environment().get_template(template).render(**values), status_code=status_code)
