import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs } from 'ai';
import { createAgent } from 'langchain';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryTool as aiSdkMemoryTool } from '../../src/ai-sdk.js';
import { memoryTool as langChainMemoryTool } from '../../src/langchain.js';
import type { Vault } from '../../src/index.js';
import { CONFORMANCE_STEPS, conformanceMismatches, seedConformance } from '../kit/conformance.js';
import { startFakeApi, type FakeApi } from '../kit/fake-messages-api.js';
import { memoryVault } from '../kit/vault.js';
import { chatModel, conformanceScript, sentOutcomes } from './conversation.js';

const USER = 'user-conformance';
const STEPS = CONFORMANCE_STEPS.length;
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

async function conversation(run: (api: FakeApi, vault: Vault) => Promise<unknown>) {
  const api = await startFakeApi(conformanceScript);
  const { vault } = await memoryVault();
  open.push(api, vault);
  await seedConformance(vault, USER);
  await run(api, vault);
  expect(api.requests).toHaveLength(STEPS + 1);
  return sentOutcomes(api);
}

describe('the conformance conversation through the three entry points', () => {
  it('gives identical tool_result text and error flags under toolRunner and the AI SDK; LangChain drops the flag only', async () => {
    const viaToolRunner = await conversation(async (api, vault) => {
      const client = new Anthropic({ apiKey: 'test-key', baseURL: api.baseURL, maxRetries: 0 });
      await client.beta.messages.toolRunner({
        model: 'claude-test',
        max_tokens: 1024,
        messages: [{ role: 'user', content: 'Go.' }],
        tools: [vault.tool(USER)],
        max_iterations: STEPS + 1,
      });
    });
    expect(conformanceMismatches(viaToolRunner)).toEqual([]);

    const viaAiSdk = await conversation(async (api, vault) => {
      const provider = createAnthropic({ apiKey: 'test-key', baseURL: `${api.baseURL}/v1` });
      await generateText({
        model: provider('claude-sonnet-4-5'),
        prompt: 'Go.',
        tools: { memory: aiSdkMemoryTool(vault, USER) },
        stopWhen: stepCountIs(STEPS + 1),
        maxRetries: 0,
      });
    });
    expect(viaAiSdk).toEqual(viaToolRunner);

    const viaLangChain = await conversation(async (api, vault) => {
      const agent = createAgent({ model: chatModel(api), tools: [langChainMemoryTool(vault, USER)] });
      await agent.invoke({ messages: [{ role: 'user', content: 'Go.' }] }, { recursionLimit: 3 * STEPS });
    });
    // @langchain/anthropic sends no is_error (a ToolMessage's status is not mapped): same text, flag absent.
    expect(viaLangChain).toEqual(viaToolRunner.map((outcome) => ({ ...outcome, isError: false })));
  });
});
