// vault.tool(user) hands every input to the chain: the SDK's betaMemoryTool would answer an unknown
// command itself ("chmod not implemented") and find a command such as "toString" on Object.prototype.
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { describe, expect, it } from 'vitest';
import { memoryVault } from '../kit/vault.js';

const VALID = 'Valid commands are: view, create, str_replace, insert, delete, rename.';

describe('vault.tool(user).run', () => {
  it('answers an unknown command, or one named like an Object.prototype member, in the protocol’s words', async () => {
    const { vault } = await memoryVault();
    const tool = vault.tool('ann');
    for (const command of ['chmod', 'toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const error = await Promise.resolve(tool.run({ command, path: '/memories/a.md' } as never)).catch((e) => e);
      expect(error, command).toBeInstanceOf(ToolError);
      expect((error as ToolError).content).toBe(`Error: Unknown command "${command}". ${VALID}`);
    }
    await tool.run({ command: 'create', path: '/memories/a.md', file_text: 'a\n' });
    expect(await tool.run({ command: 'view', path: '/memories/a.md' })).toContain('a');
    await vault.close();
  });
});
