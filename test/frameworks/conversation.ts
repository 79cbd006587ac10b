/**
 * The conformance conversation as a scripted model: one memory call per assistant turn (step i of
 * CONFORMANCE_STEPS in request i, its tool_use id the step's name), then a final text turn; and
 * the tool_result blocks a framework sent back, read as conformance outcomes.
 */
import { ChatAnthropic } from '@langchain/anthropic';
import {
  CONFORMANCE_STEPS,
  normaliseAnswer,
  type ConformanceBlock,
  type ConformanceOutcome,
} from '../kit/conformance.js';
import { toolUse, type FakeApi, type Script, type ScriptedTurn } from '../kit/fake-messages-api.js';

export const DONE: ScriptedTurn = { stop_reason: 'end_turn', content: [{ type: 'text', text: 'Done.' }] };

export const conformanceScript: Script = (i) => {
  const step = CONFORMANCE_STEPS[i];
  return step ? { stop_reason: 'tool_use', content: [toolUse(step.step, step.input)] } : DONE;
};

/** The tool_results sent back, as outcomes (is_error absent counts as false). */
export function sentOutcomes(api: FakeApi): ConformanceOutcome[] {
  return api.toolResults().map((result) =>
    normaliseAnswer(result.tool_use_id, {
      content: (result.content ?? '') as string | ConformanceBlock[],
      isError: result.is_error === true,
    }),
  );
}

/** ChatAnthropic against the stand-in (no retries: a failure shows at once). */
export function chatModel(api: FakeApi): ChatAnthropic {
  return new ChatAnthropic({
    model: 'claude-test',
    apiKey: 'test-key',
    anthropicApiUrl: api.baseURL,
    maxRetries: 0,
    maxTokens: 1024,
  });
}
