"""A stand-in for ``anthropic.lib.tools`` (the SDK is not installed here): the base classes'
shape as the SDK has it (call -> execute -> one abstract method per command, a typed command
object, ToolError for an error result). Put on sys.path only by the tests."""

from abc import ABC, abstractmethod


class ToolError(Exception):
    def __init__(self, content):
        super().__init__(content)
        self.content = content


class _Command:
    def __init__(self, values):
        self._values = dict(values)
        for key, value in values.items():
            setattr(self, key, value)

    def to_dict(self):
        return dict(self._values)


class BetaAbstractMemoryTool(ABC):
    def __init__(self, *, cache_control=None):
        self._cache_control = cache_control

    def to_dict(self):
        return {"type": "memory_20250818", "name": "memory"}

    def call(self, input):
        command = _Command(input)
        handler = getattr(self, str(input.get("command")), None)
        if input.get("command") not in ("view", "create", "str_replace", "insert", "delete", "rename"):
            raise NotImplementedError(f"Unknown command: {input.get('command')}")
        return handler(command)

    @abstractmethod
    def view(self, command): ...

    @abstractmethod
    def create(self, command): ...

    @abstractmethod
    def str_replace(self, command): ...

    @abstractmethod
    def insert(self, command): ...

    @abstractmethod
    def delete(self, command): ...

    @abstractmethod
    def rename(self, command): ...


class BetaAsyncAbstractMemoryTool(ABC):
    def __init__(self, *, cache_control=None):
        self._cache_control = cache_control

    async def call(self, input):
        if input.get("command") not in ("view", "create", "str_replace", "insert", "delete", "rename"):
            raise NotImplementedError(f"Unknown command: {input.get('command')}")
        return await getattr(self, input["command"])(_Command(input))

    @abstractmethod
    async def view(self, command): ...

    @abstractmethod
    async def create(self, command): ...

    @abstractmethod
    async def str_replace(self, command): ...

    @abstractmethod
    async def insert(self, command): ...

    @abstractmethod
    async def delete(self, command): ...

    @abstractmethod
    async def rename(self, command): ...
