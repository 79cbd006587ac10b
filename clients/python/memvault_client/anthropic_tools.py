"""Memory tools for the ``anthropic`` SDK's tool runner, bound to one user of a ``memvault serve``.

Imported by ``memvault_client`` only when ``anthropic`` is importable. A command's error result is
raised as the SDK's ToolError, which the runner sends to the model with ``is_error: true``.
"""

from __future__ import annotations

from typing import Any, Dict

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool

try:  # where the SDK keeps ToolError has moved between releases
    from anthropic.lib.tools import ToolError
except ImportError:  # pragma: no cover
    from anthropic.lib.tools._beta_functions import ToolError  # type: ignore[no-redef]

from .client import AsyncMemvaultClient, MemvaultClient, ToolResult


def _input_of(command: Any) -> Dict[str, Any]:
    """The tool input as the model sent it (the SDK hands a typed command model)."""
    if isinstance(command, dict):
        return dict(command)
    for method in ("to_dict", "model_dump"):
        dump = getattr(command, method, None)
        if callable(dump):
            return {k: v for k, v in dump().items() if v is not None}
    return {k: v for k, v in vars(command).items() if v is not None and not k.startswith("_")}


def _answer(result: ToolResult) -> Any:
    if result.is_error:
        raise ToolError(result.content)
    return result.content


class MemvaultMemoryTool(BetaAbstractMemoryTool):
    """``BetaAbstractMemoryTool`` over memvault: every command goes to POST /v1/memory for one user."""

    def __init__(self, client: MemvaultClient, **options: Any) -> None:
        super().__init__(**options)
        self._client = client

    def _call(self, command: Any) -> Any:
        return _answer(self._client.run(_input_of(command)))

    def view(self, command: Any) -> Any:
        return self._call(command)

    def create(self, command: Any) -> Any:
        return self._call(command)

    def str_replace(self, command: Any) -> Any:
        return self._call(command)

    def insert(self, command: Any) -> Any:
        return self._call(command)

    def delete(self, command: Any) -> Any:
        return self._call(command)

    def rename(self, command: Any) -> Any:
        return self._call(command)


class AsyncMemvaultMemoryTool(BetaAsyncAbstractMemoryTool):
    """``BetaAsyncAbstractMemoryTool`` over memvault, for the async tool runner."""

    def __init__(self, client: AsyncMemvaultClient, **options: Any) -> None:
        super().__init__(**options)
        self._client = client

    async def _call(self, command: Any) -> Any:
        return _answer(await self._client.run(_input_of(command)))

    async def view(self, command: Any) -> Any:
        return await self._call(command)

    async def create(self, command: Any) -> Any:
        return await self._call(command)

    async def str_replace(self, command: Any) -> Any:
        return await self._call(command)

    async def insert(self, command: Any) -> Any:
        return await self._call(command)

    async def delete(self, command: Any) -> Any:
        return await self._call(command)

    async def rename(self, command: Any) -> Any:
        return await self._call(command)
