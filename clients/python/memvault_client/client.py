"""Sync and async clients of ``memvault serve`` (standard library only: http.client, asyncio).

The service derives the user from the credential: a user's bearer JWT, or a service API key with the
``act-as`` scope plus the user's id (sent as the ``Memvault-User`` header). Each command that changes
memory is sent with an ``Idempotency-Key``, so a retry after a cut-off answer never runs it twice.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import ssl
import time
import uuid
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union
from urllib.parse import urlsplit

from .errors import MemvaultError, MemvaultTransportError

Content = Union[str, List[Dict[str, Any]]]
CHANGING_COMMANDS = frozenset({"create", "str_replace", "insert", "delete", "rename"})


@dataclass(frozen=True)
class ToolResult:
    """What the model reads: the tool result's content and whether it is an error."""

    content: Content
    is_error: bool


class MemvaultClient:
    """Runs memory tool commands on a ``memvault serve`` for one caller.

    ``token``: a user's JWT (the user is its ``sub``), or a service API key (``mvk_...``) together
    with ``user`` (the key needs the ``act-as`` scope).
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        user: Optional[str] = None,
        timeout: float = 30.0,
        retries: int = 2,
        ssl_context: Optional[ssl.SSLContext] = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be http(s)://host[:port]")
        if not token:
            raise ValueError("a token (user JWT or service API key) is required")
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
        if user is not None:
            self._headers["memvault-user"] = user
        self._timeout = timeout
        self._retries = retries
        self._ssl = ssl_context

    # The six commands of memory_20250818.
    def view(self, path: str, view_range: Optional[Sequence[int]] = None) -> ToolResult:
        command: Dict[str, Any] = {"command": "view", "path": path}
        if view_range is not None:
            command["view_range"] = list(view_range)
        return self.run(command)

    def create(self, path: str, file_text: str) -> ToolResult:
        return self.run({"command": "create", "path": path, "file_text": file_text})

    def str_replace(self, path: str, old_str: str, new_str: str = "") -> ToolResult:
        return self.run({"command": "str_replace", "path": path, "old_str": old_str, "new_str": new_str})

    def insert(self, path: str, insert_line: int, insert_text: str) -> ToolResult:
        return self.run({"command": "insert", "path": path, "insert_line": insert_line, "insert_text": insert_text})

    def delete(self, path: str) -> ToolResult:
        return self.run({"command": "delete", "path": path})

    def rename(self, old_path: str, new_path: str) -> ToolResult:
        return self.run({"command": "rename", "old_path": old_path, "new_path": new_path})

    def run(self, command: Mapping[str, Any], *, idempotency_key: Optional[str] = None) -> ToolResult:
        """Runs one tool input exactly as the model sent it; answers what the model should read."""
        headers = dict(self._headers)
        if idempotency_key is None and command.get("command") in CHANGING_COMMANDS:
            idempotency_key = str(uuid.uuid4())
        if idempotency_key is not None:
            headers["idempotency-key"] = idempotency_key
        body = json.dumps(command, ensure_ascii=False).encode("utf-8")
        status, answer = self._send("POST", "/v1/memory", body, headers, retry=idempotency_key is not None or command.get("command") == "view")
        if status != 200:
            raise MemvaultError.from_problem(status, answer)
        return ToolResult(content=answer["content"], is_error=bool(answer["is_error"]))

    def healthy(self) -> bool:
        status, _ = self._send("GET", "/healthz", None, {}, retry=True)
        return status == 200

    def _connection(self) -> http.client.HTTPConnection:
        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout, context=self._ssl)
        return http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)

    def _send(self, method: str, path: str, body: Optional[bytes], headers: Mapping[str, str], *, retry: bool):
        attempts = 1 + (self._retries if retry else 0)
        last: Optional[BaseException] = None
        for attempt in range(attempts):
            connection = self._connection()
            try:
                connection.request(method, self._prefix + path, body=body, headers=dict(headers))
                response = connection.getresponse()
                raw = response.read()
                status = response.status
                retry_after = response.getheader("retry-after")
            except (OSError, http.client.HTTPException) as error:
                last = error
                if attempt + 1 < attempts:
                    time.sleep(0.05 * 2**attempt)
                continue
            finally:
                connection.close()
            if status in (409, 503) and attempt + 1 < attempts:
                # The first run with this key is still going, or this instance is stopping: wait and resend.
                time.sleep(min(float(retry_after or 0.2), 2.0))
                continue
            try:
                answer = json.loads(raw.decode("utf-8")) if raw else None
            except ValueError as error:
                raise MemvaultTransportError("the answer is not JSON") from error
            return status, answer
        raise MemvaultTransportError(f"no answer after {attempts} attempt(s): {type(last).__name__}")


class AsyncMemvaultClient:
    """The async twin of MemvaultClient: each request runs on a worker thread (asyncio.to_thread)."""

    def __init__(self, base_url: str, token: str, **options: Any) -> None:
        self._sync = MemvaultClient(base_url, token, **options)

    async def view(self, path: str, view_range: Optional[Sequence[int]] = None) -> ToolResult:
        return await asyncio.to_thread(self._sync.view, path, view_range)

    async def create(self, path: str, file_text: str) -> ToolResult:
        return await asyncio.to_thread(self._sync.create, path, file_text)

    async def str_replace(self, path: str, old_str: str, new_str: str = "") -> ToolResult:
        return await asyncio.to_thread(self._sync.str_replace, path, old_str, new_str)

    async def insert(self, path: str, insert_line: int, insert_text: str) -> ToolResult:
        return await asyncio.to_thread(self._sync.insert, path, insert_line, insert_text)

    async def delete(self, path: str) -> ToolResult:
        return await asyncio.to_thread(self._sync.delete, path)

    async def rename(self, old_path: str, new_path: str) -> ToolResult:
        return await asyncio.to_thread(self._sync.rename, old_path, new_path)

    async def run(self, command: Mapping[str, Any], *, idempotency_key: Optional[str] = None) -> ToolResult:
        return await asyncio.to_thread(self._sync.run, command, idempotency_key=idempotency_key)

    async def healthy(self) -> bool:
        return await asyncio.to_thread(self._sync.healthy)
