"""The client against a live ``memvault serve`` (two processes on one file store), started by
test/serve/python-client.test.ts, which passes in the environment:

  MEMVAULT_URL_A, MEMVAULT_URL_B  the two servers
  MEMVAULT_API_KEY                a service key with act-as
  MEMVAULT_CONFORMANCE            JSON: the conformance steps, the outcomes toolRunner gave, the seeded users
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
import threading
import unittest
import uuid

from memvault_client import AsyncMemvaultClient, MemvaultClient, MemvaultError

URL_A = os.environ["MEMVAULT_URL_A"]
URL_B = os.environ["MEMVAULT_URL_B"]
API_KEY = os.environ["MEMVAULT_API_KEY"]
with open(os.environ["MEMVAULT_CONFORMANCE"], encoding="utf-8") as f:
    CONFORMANCE = json.load(f)
STUB = os.path.join(os.path.dirname(__file__), "stub")


def normalise(step, content, is_error):
    """The outcome's normal form of test/kit/conformance.ts (text blocks joined, images spelled out)."""
    if isinstance(content, str):
        text = content
    else:
        text = "\n".join(
            b["text"] if b["type"] == "text" else f"[image {b['source']['media_type']} {b['source']['data']}]" for b in content
        )
    return {"step": step, "isError": is_error, "text": text}


class ConformanceOverHttp(unittest.TestCase):
    maxDiff = None

    def test_sync_client_answers_what_tool_runner_answers(self):
        client = MemvaultClient(URL_A, API_KEY, user=CONFORMANCE["users"]["sync"])
        outcomes = []
        for step in CONFORMANCE["steps"]:
            result = client.run(step["input"])
            outcomes.append(normalise(step["step"], result.content, result.is_error))
        self.assertEqual(outcomes, CONFORMANCE["expected"])

    def test_async_client_answers_the_same_on_the_other_server(self):
        client = AsyncMemvaultClient(URL_B, API_KEY, user=CONFORMANCE["users"]["async"])

        async def conversation():
            out = []
            for step in CONFORMANCE["steps"]:
                result = await client.run(step["input"])
                out.append(normalise(step["step"], result.content, result.is_error))
            return out

        self.assertEqual(asyncio.run(conversation()), CONFORMANCE["expected"])

    def test_memory_tool_subclasses_with_the_sdk_stub(self):
        # anthropic is not installed here: without it the package has no tool classes...
        for name in [m for m in sys.modules if m == "memvault_client" or m.startswith("memvault_client.")]:
            del sys.modules[name]
        self.assertFalse(hasattr(importlib.import_module("memvault_client"), "MemvaultMemoryTool"))
        # ...and with a stub of anthropic.lib.tools on sys.path standing in for it, it has them.
        sys.path.insert(0, STUB)
        try:
            for name in [m for m in sys.modules if m == "memvault_client" or m.startswith("memvault_client.") or m.startswith("anthropic")]:
                del sys.modules[name]
            package = importlib.import_module("memvault_client")
            tools = importlib.import_module("anthropic.lib.tools")
            tool = package.MemvaultMemoryTool(package.MemvaultClient(URL_A, API_KEY, user=CONFORMANCE["users"]["tool"]))
            self.assertIsInstance(tool, tools.BetaAbstractMemoryTool)
            outcomes = []
            for step in CONFORMANCE["steps"]:
                try:
                    outcomes.append(normalise(step["step"], tool.call(step["input"]), False))
                except tools.ToolError as error:
                    outcomes.append(normalise(step["step"], error.content, True))
                except NotImplementedError as error:  # the SDK's runner answers an unknown command itself
                    outcomes.append({"step": step["step"], "isError": True, "text": f"Error: {error}"})
            # An unknown command never reaches the tool's methods: the SDK's dispatch refuses it itself.
            expected = [e for e in CONFORMANCE["expected"] if e["step"] != "unknown-command"]
            unknown = [o for o in outcomes if o["step"] == "unknown-command"]
            self.assertEqual([o["isError"] for o in unknown], [True])
            self.assertEqual([o for o in outcomes if o["step"] != "unknown-command"], expected)
            async_tool = package.AsyncMemvaultMemoryTool(package.AsyncMemvaultClient(URL_B, API_KEY, user=CONFORMANCE["users"]["tool"]))
            self.assertIsInstance(async_tool, tools.BetaAsyncAbstractMemoryTool)
            view = asyncio.run(async_tool.call({"command": "view", "path": "/memories/notes/todo.md"}))
            self.assertTrue(view.startswith("Here's the content of /memories/notes/todo.md with line numbers:"))
        finally:
            sys.path.remove(STUB)
            for name in [m for m in sys.modules if m.startswith("anthropic")]:
                del sys.modules[name]


class SafeRetries(unittest.TestCase):
    def test_a_resent_command_runs_once_even_on_the_other_instance(self):
        a = MemvaultClient(URL_A, API_KEY, user="py-retry")
        b = MemvaultClient(URL_B, API_KEY, user="py-retry")
        a.create("/memories/log.md", "start\n")
        key = str(uuid.uuid4())
        command = {"command": "insert", "path": "/memories/log.md", "insert_line": 1, "insert_text": "once"}
        first = a.run(command, idempotency_key=key)
        again = b.run(command, idempotency_key=key)
        self.assertEqual(first, again)
        view = a.view("/memories/log.md")
        self.assertEqual(view.content, "Here's the content of /memories/log.md with line numbers:\n     1\tstart\n     2\tonce")
        with self.assertRaises(MemvaultError) as caught:
            a.run({**command, "insert_text": "other"}, idempotency_key=key)
        self.assertEqual((caught.exception.status, caught.exception.type), (422, "urn:memvault:problem:idempotency-key-reused"))


class ManyClients(unittest.TestCase):
    def test_sixteen_threads_on_two_processes_lose_no_acknowledged_edit(self):
        MemvaultClient(URL_A, API_KEY, user="py-many").create("/memories/shared.md", "head\n")
        acknowledged = []
        lock = threading.Lock()

        def edit(i):
            client = MemvaultClient(URL_A if i % 2 else URL_B, API_KEY, user="py-many")
            result = client.insert("/memories/shared.md", 1, f"thread-{i}")
            if not result.is_error:
                with lock:
                    acknowledged.append(i)

        threads = [threading.Thread(target=edit, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        text = MemvaultClient(URL_B, API_KEY, user="py-many").view("/memories/shared.md").content
        self.assertGreater(len(acknowledged), 8)
        for i in acknowledged:
            self.assertIn(f"\tthread-{i}\n", text + "\n")


class Refusals(unittest.TestCase):
    def test_bad_credentials_and_missing_user_are_problems(self):
        with self.assertRaises(MemvaultError) as caught:
            MemvaultClient(URL_A, API_KEY[:-4] + "AAAA", user="py-sync").view("/memories")
        self.assertEqual((caught.exception.status, caught.exception.type), (401, "urn:memvault:problem:unauthorized"))
        with self.assertRaises(MemvaultError) as caught:
            MemvaultClient(URL_A, API_KEY).view("/memories")
        self.assertEqual(caught.exception.status, 400)
        with self.assertRaises(ValueError):
            MemvaultClient("ftp://x", API_KEY)


if __name__ == "__main__":
    unittest.main()
