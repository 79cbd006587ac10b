"""Errors of the memvault HTTP service, as the client raises them."""

from __future__ import annotations

from typing import Any, Mapping


class MemvaultError(Exception):
    """A request the service refused: an RFC 9457 problem (stable ``type``), or a transport failure."""

    def __init__(self, status: int, type_: str, title: str, detail: str) -> None:
        super().__init__(f"{status} {title}: {detail}")
        self.status = status
        self.type = type_
        self.title = title
        self.detail = detail

    @classmethod
    def from_problem(cls, status: int, body: Mapping[str, Any] | None) -> "MemvaultError":
        body = body or {}
        return cls(
            status,
            str(body.get("type", "about:blank")),
            str(body.get("title", "HTTP error")),
            str(body.get("detail", "")),
        )


class MemvaultTransportError(MemvaultError):
    """The service could not be reached, or its answer was cut off (after the client's retries)."""

    def __init__(self, detail: str) -> None:
        super().__init__(0, "urn:memvault:problem:transport", "The service could not be reached", detail)
