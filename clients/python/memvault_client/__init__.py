"""Python client of ``memvault serve``: Claude's memory tool on memvault's encrypted store, over HTTP."""

from .client import AsyncMemvaultClient, MemvaultClient, ToolResult
from .errors import MemvaultError, MemvaultTransportError

__all__ = ["AsyncMemvaultClient", "MemvaultClient", "MemvaultError", "MemvaultTransportError", "ToolResult"]

try:  # the tool-runner classes exist only where the anthropic SDK does
    import anthropic.lib.tools  # noqa: F401
except ImportError:
    pass
else:
    from .anthropic_tools import AsyncMemvaultMemoryTool, MemvaultMemoryTool  # noqa: F401

    __all__ += ["AsyncMemvaultMemoryTool", "MemvaultMemoryTool"]
