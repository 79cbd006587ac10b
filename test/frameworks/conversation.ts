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
import type { CommandResult, Vault } from '../../src/index.js';
import { toolUse, type FakeApi, type Script, type ScriptedTurn } from '../kit/fake-messages-api.js';
import { StoreWrapper, type StoreOp } from '../kit/stores.js';

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

/**
 * The vault, its runs counted: `maxInFlight` above 1 shows a framework ran a turn's calls at once
 * (each command awaits the store, so calls started together overlap).
 */
export function countingRuns(vault: Vault): {
  vault: Vault;
  maxInFlight: () => number;
  results: () => Promise<CommandResult[]>;
} {
  let inFlight = 0;
  let max = 0;
  const runs: Array<Promise<CommandResult>> = [];
  const counted = Object.create(vault) as Vault;
  counted.run = (...args) => {
    max = Math.max(max, ++inFlight);
    const run = vault.run(...args).finally(() => (inFlight -= 1));
    runs.push(run);
    return run;
  };
  // Every run's result, once all have ended (a framework may stop waiting for one that is still running).
  return { vault: counted, maxInFlight: () => max, results: () => Promise.all(runs) };
}

/** Eight edits of one file in one assistant turn (four str_replace, four insert at line 0). */
export const PLAN = '- step 1: todo\n- step 2: todo\n- step 3: todo\n- step 4: todo\n';
export const parallelTurn: ScriptedTurn = {
  stop_reason: 'tool_use',
  content: [
    ...[1, 2, 3, 4].map((i) =>
      toolUse(`e${i}`, {
        command: 'str_replace',
        path: '/memories/plan.md',
        old_str: `- step ${i}: todo`,
        new_str: `- step ${i}: done`,
      }),
    ),
    ...[1, 2, 3, 4].map((i) =>
      toolUse(`i${i}`, { command: 'insert', path: '/memories/plan.md', insert_line: 0, insert_text: `note ${i}` }),
    ),
  ],
};

/** One edit of the plan, and what it answers. */
export const editStep1 = toolUse('s1', {
  command: 'str_replace',
  path: '/memories/plan.md',
  old_str: '- step 1: todo',
  new_str: '- step 1: done',
});
export const EDITED_STEP_1 =
  'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
  '     1\t- step 1: done\n     2\t- step 2: todo\n     3\t- step 3: todo';

/** vault.run's answer to a command its signal stopped before it changed anything. */
export const ABORTED = {
  content: 'Error: The command was cancelled before it changed anything. Nothing was changed.',
  isError: true,
  code: 'ABORTED',
};

/** The plan file after the parallel turn: every edit landed. */
export async function planLines(vault: Vault, userId: string): Promise<string[]> {
  const file = await (await vault.files(userId)).read('/memories/plan.md');
  return Buffer.from(file!.data).toString('utf8').split('\n').filter(Boolean).sort();
}
export const PLAN_AFTER = [
  '- step 1: done',
  '- step 2: done',
  '- step 3: done',
  '- step 4: done',
  'note 1',
  'note 2',
  'note 3',
  'note 4',
];

/** Aborts `controller` once, as the next request of kind `op` goes out (the command is then mid-way). */
export class AbortingStore extends StoreWrapper {
  private armed: { op: StoreOp; controller: AbortController } | undefined;
  abortAt(op: StoreOp, controller: AbortController): void {
    this.armed = { op, controller };
  }
  protected override step(op: StoreOp): void {
    if (this.armed?.op !== op) return;
    this.armed.controller.abort(new Error('stopped by the host'));
    this.armed = undefined;
  }
}
