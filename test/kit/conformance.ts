/**
 * The conformance conversation: one scripted sequence of memory tool inputs that covers every
 * command of the protocol (/work/shared/memory-tool-spec.md) and its error cases, to run through any
 * entry point (toolRunner handlers, the AI SDK tool, the LangChain tool, the HTTP service) and
 * compare what the model would read.
 *
 * Usage:
 *   await seedConformance(vault, user);                  // host-side files the model cannot write (an image)
 *   const outcomes = await runConformance((input) => ...); // your entry point, one input at a time, in order
 *   expect(outcomes).toEqual(await runConformance(viaToolRunner(vault2, user))); // or against the checks:
 *   expect(conformanceMismatches(outcomes)).toEqual([]);
 *
 * Every run starts from a vault of default options (PII redactor, quotas, history on) and a user who
 * has nothing but the seeded files: the steps depend on each other's effects, in order.
 */
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { Vault } from '../../src/memvault.js';

/** A block of a tool result as the protocol has it (text, or a base64 image). */
export type ConformanceBlock =
  { type: 'text'; text: string } | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } };

/** What an entry point answered to one input: the tool_result content and its is_error flag. */
export interface ConformanceAnswer {
  content: string | ConformanceBlock[];
  isError: boolean;
}

/** Runs one memory tool input through the entry point under test. */
export type ConformanceExecutor = (input: Record<string, unknown>) => Promise<ConformanceAnswer>;

/** One step's outcome, normalised so entry points compare with toEqual. */
export interface ConformanceOutcome {
  step: string;
  isError: boolean;
  /** The text blocks joined with '\n'; an image block as `[image <media type> <base64 data>]`. */
  text: string;
}

export interface ConformanceStep {
  /** A stable, unique name (test failures and other suites refer to it). */
  step: string;
  input: Record<string, unknown>;
  /** The protocol's answer: an error or not, and the exact text (a RegExp where memvault adds detail). */
  expect: { isError: boolean; text: string | RegExp };
}

/** The image seedConformance writes: a 1x1 PNG. */
export const CONFORMANCE_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);
export const CONFORMANCE_IMAGE_PATH = '/memories/pictures/pixel.png';

const TODO = '# Todo\n- buy milk\n- call the plumber\n- buy bread\n';
const ok = (text: string | RegExp) => ({ isError: false, text });
const err = (text: string | RegExp) => ({ isError: true, text });
const dirHeader = (path: string) =>
  `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:`;
const numbered = (lines: string[], from = 1) =>
  lines.map((line, i) => `${String(from + i).padStart(6)}\t${line}`).join('\n');
const invalidPath = (path: string) => new RegExp(`^Error: Invalid path "${escape(path)}"`);
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The conversation, in order. */
export const CONFORMANCE_STEPS: readonly ConformanceStep[] = [
  { step: 'view-root', input: { command: 'view', path: '/memories' }, expect: ok(/^Here're the files/) },
  {
    step: 'create-todo',
    input: { command: 'create', path: '/memories/notes/todo.md', file_text: TODO },
    expect: ok('File created successfully at: /memories/notes/todo.md'),
  },
  {
    step: 'create-nested',
    input: { command: 'create', path: '/memories/notes/deep/er/plan.md', file_text: 'step one\nstep two\n' },
    expect: ok('File created successfully at: /memories/notes/deep/er/plan.md'),
  },
  {
    step: 'create-unicode',
    input: { command: 'create', path: '/memories/naïve café.md', file_text: 'crème brûlée ✓\n日本語\n' },
    expect: ok('File created successfully at: /memories/naïve café.md'),
  },
  {
    step: 'view-directory',
    input: { command: 'view', path: '/memories/notes' },
    expect: ok(
      `${dirHeader('/memories/notes')}\n67B\t/memories/notes\n18B\t/memories/notes/deep/\n` +
        `18B\t/memories/notes/deep/er/\n49B\t/memories/notes/todo.md`,
    ),
  },
  { step: 'view-root-listing', input: { command: 'view', path: '/memories' }, expect: ok(/\t\/memories\/notes\/\n/) },
  {
    step: 'view-file',
    input: { command: 'view', path: '/memories/notes/todo.md' },
    expect: ok(
      `Here's the content of /memories/notes/todo.md with line numbers:\n` +
        numbered(['# Todo', '- buy milk', '- call the plumber', '- buy bread']),
    ),
  },
  {
    step: 'view-range',
    input: { command: 'view', path: '/memories/notes/todo.md', view_range: [2, 3] },
    expect: ok(/^Here's the content of \/memories\/notes\/todo\.md with line numbers:\n {5}2\t- buy milk\n {5}3\t/),
  },
  {
    step: 'view-range-to-end',
    input: { command: 'view', path: '/memories/notes/todo.md', view_range: [3, -1] },
    expect: ok(/^Here's the content of [^\n]+\n {5}3\t- call the plumber\n {5}4\t- buy bread/),
  },
  {
    step: 'view-range-invalid',
    input: { command: 'view', path: '/memories/notes/todo.md', view_range: [3, 99] },
    expect: err(/^Error: Invalid `view_range` parameter: \[3, 99\]/),
  },
  {
    step: 'view-missing',
    input: { command: 'view', path: '/memories/nope.md' },
    expect: err('The path /memories/nope.md does not exist. Please provide a valid path.'),
  },
  {
    step: 'str-replace-one',
    input: { command: 'str_replace', path: '/memories/notes/todo.md', old_str: 'milk', new_str: 'oat milk' },
    expect: ok(/^The memory file has been edited\.[^\n]*\n(.*\n)* {5}2\t- buy oat milk/),
  },
  {
    step: 'str-replace-none',
    input: { command: 'str_replace', path: '/memories/notes/todo.md', old_str: 'eggs', new_str: 'ham' },
    expect: err('No replacement was performed, old_str `eggs` did not appear verbatim in /memories/notes/todo.md.'),
  },
  {
    step: 'str-replace-many',
    input: { command: 'str_replace', path: '/memories/notes/todo.md', old_str: 'buy', new_str: 'get' },
    expect: err(
      'No replacement was performed. Multiple occurrences of old_str `buy` in lines: 2, 4. Please ensure it is unique',
    ),
  },
  {
    step: 'str-replace-delete',
    input: { command: 'str_replace', path: '/memories/notes/todo.md', old_str: '- call the plumber\n' },
    expect: ok(/^The memory file has been edited\./),
  },
  {
    step: 'str-replace-missing-file',
    input: { command: 'str_replace', path: '/memories/gone.md', old_str: 'a', new_str: 'b' },
    expect: err('Error: The path /memories/gone.md does not exist. Please provide a valid path.'),
  },
  {
    step: 'str-replace-directory',
    input: { command: 'str_replace', path: '/memories/notes', old_str: 'a', new_str: 'b' },
    expect: err('Error: The path /memories/notes does not exist. Please provide a valid path.'),
  },
  {
    step: 'insert-start',
    input: { command: 'insert', path: '/memories/notes/todo.md', insert_line: 0, insert_text: 'Updated today' },
    expect: ok('The file /memories/notes/todo.md has been edited.'),
  },
  {
    step: 'insert-end',
    input: { command: 'insert', path: '/memories/notes/todo.md', insert_line: 4, insert_text: '- water plants' },
    expect: ok('The file /memories/notes/todo.md has been edited.'),
  },
  {
    step: 'insert-out-of-range',
    input: { command: 'insert', path: '/memories/notes/todo.md', insert_line: 42, insert_text: 'x' },
    expect: err(
      'Error: Invalid `insert_line` parameter: 42. It should be within the range of lines of the file: [0, 5]',
    ),
  },
  {
    step: 'insert-negative',
    input: { command: 'insert', path: '/memories/notes/todo.md', insert_line: -1, insert_text: 'x' },
    expect: err(/^Error: Invalid `insert_line` parameter: -1\./),
  },
  {
    step: 'insert-missing-file',
    input: { command: 'insert', path: '/memories/gone.md', insert_line: 0, insert_text: 'x' },
    expect: err('Error: The path /memories/gone.md does not exist'),
  },
  {
    step: 'view-after-edits',
    input: { command: 'view', path: '/memories/notes/todo.md' },
    expect: ok(
      `Here's the content of /memories/notes/todo.md with line numbers:\n` +
        numbered(['Updated today', '# Todo', '- buy oat milk', '- buy bread', '- water plants']),
    ),
  },
  {
    step: 'create-overwrite',
    input: { command: 'create', path: '/memories/naïve café.md', file_text: 'replaced\n' },
    expect: ok('File created successfully at: /memories/naïve café.md'),
  },
  {
    step: 'rename-onto-existing',
    input: { command: 'rename', old_path: '/memories/naïve café.md', new_path: '/memories/notes/todo.md' },
    expect: err('Error: The destination /memories/notes/todo.md already exists'),
  },
  {
    step: 'rename-missing',
    input: { command: 'rename', old_path: '/memories/gone.md', new_path: '/memories/here.md' },
    expect: err('Error: The path /memories/gone.md does not exist'),
  },
  {
    step: 'rename-file',
    input: { command: 'rename', old_path: '/memories/naïve café.md', new_path: '/memories/archive/cafe.md' },
    expect: ok('Successfully renamed /memories/naïve café.md to /memories/archive/cafe.md'),
  },
  {
    step: 'rename-directory',
    input: { command: 'rename', old_path: '/memories/notes/deep', new_path: '/memories/archive/deep' },
    expect: ok('Successfully renamed /memories/notes/deep to /memories/archive/deep'),
  },
  {
    step: 'rename-root',
    input: { command: 'rename', old_path: '/memories', new_path: '/memories/x' },
    expect: err(/^Error: /),
  },
  {
    step: 'view-image',
    input: { command: 'view', path: CONFORMANCE_IMAGE_PATH },
    expect: ok(
      `Here's the image at ${CONFORMANCE_IMAGE_PATH}:\n[image image/png ${CONFORMANCE_PNG.toString('base64')}]`,
    ),
  },
  { step: 'path-absolute-outside', input: { command: 'view', path: '/etc/passwd' }, expect: err(/^Error: /) },
  {
    step: 'path-dot-dot',
    input: { command: 'create', path: '/memories/../secrets.md', file_text: 'x' },
    expect: err(invalidPath('/memories/../secrets.md')),
  },
  {
    step: 'path-encoded',
    input: { command: 'view', path: '/memories/%2e%2e%2fetc%2fpasswd' },
    expect: err(/^Error: Invalid path/),
  },
  { step: 'path-backslash', input: { command: 'delete', path: '/memories\\..\\x' }, expect: err(/^Error: /) },
  { step: 'path-sibling-prefix', input: { command: 'view', path: '/memoriesX/a.md' }, expect: err(/^Error: /) },
  {
    step: 'rename-outside',
    input: { command: 'rename', old_path: '/memories/notes/todo.md', new_path: '/tmp/todo.md' },
    expect: err(/^Error: /),
  },
  // The protocol's answer, also under toolRunner (vault.tool does not let betaMemoryTool answer it).
  {
    step: 'unknown-command',
    input: { command: 'chmod', path: '/memories/a.md' },
    expect: err(
      /^Error: Unknown command "chmod"\. Valid commands are: view, create, str_replace, insert, delete, rename\.$/,
    ),
  },
  {
    step: 'invalid-argument',
    input: { command: 'insert', path: '/memories/notes/todo.md', insert_line: 'two', insert_text: 'x' },
    expect: err(/^Error: /),
  },
  {
    step: 'delete-file',
    input: { command: 'delete', path: '/memories/archive/cafe.md' },
    expect: ok(/^Successfully deleted \/memories\/archive\/cafe\.md$/),
  },
  {
    step: 'delete-missing',
    input: { command: 'delete', path: '/memories/archive/cafe.md' },
    expect: err('Error: The path /memories/archive/cafe.md does not exist'),
  },
  {
    step: 'delete-directory',
    input: { command: 'delete', path: '/memories/archive' },
    expect: ok('Successfully deleted /memories/archive'),
  },
  { step: 'delete-root', input: { command: 'delete', path: '/memories' }, expect: err(/^Error: /) },
  {
    step: 'view-final',
    input: { command: 'view', path: '/memories' },
    expect: ok(new RegExp(`^${escape(dirHeader('/memories'))}\\n(.*\\n)*\\S+\\t/memories/notes/todo\\.md`)),
  },
];

/** Writes the files the model cannot write itself (an image), as the host, before a run. */
export async function seedConformance(vault: Vault, userId: string): Promise<void> {
  await (await vault.files(userId)).write(CONFORMANCE_IMAGE_PATH, new Uint8Array(CONFORMANCE_PNG));
}

/** One answer in the outcome's normal form. */
export function normaliseAnswer(step: string, answer: ConformanceAnswer): ConformanceOutcome {
  const text =
    typeof answer.content === 'string'
      ? answer.content
      : answer.content
          .map((block) =>
            block.type === 'text' ? block.text : `[image ${block.source.media_type} ${block.source.data}]`,
          )
          .join('\n');
  return { step, isError: answer.isError, text };
}

/** Runs the whole conversation through `execute`, one step after the other, and returns every outcome. */
export async function runConformance(execute: ConformanceExecutor): Promise<ConformanceOutcome[]> {
  const outcomes: ConformanceOutcome[] = [];
  for (const { step, input } of CONFORMANCE_STEPS) outcomes.push(normaliseAnswer(step, await execute(input)));
  return outcomes;
}

/** The steps whose outcome is not the protocol's answer (empty when the entry point conforms). */
export function conformanceMismatches(outcomes: readonly ConformanceOutcome[]): string[] {
  return CONFORMANCE_STEPS.flatMap(({ step, expect }, i) => {
    const got = outcomes[i];
    if (got?.step !== step) return [`${step}: missing (got ${got?.step ?? 'nothing'})`];
    const textOk = typeof expect.text === 'string' ? got.text === expect.text : expect.text.test(got.text);
    if (got.isError === expect.isError && textOk) return [];
    return [`${step}: got ${got.isError ? 'error' : 'result'} ${JSON.stringify(got.text.slice(0, 300))}`];
  });
}

/**
 * The executor of the reference entry point: `vault.tool(user)` run as toolRunner runs a tool
 * (its `run`; a ToolError's content, any other throw as `Error: <message>`, both with is_error).
 */
export function viaToolRunner(vault: Vault, userId: string): ConformanceExecutor {
  const tool = vault.tool(userId);
  return async (input) => {
    try {
      return { content: (await tool.run(input as never)) as ConformanceAnswer['content'], isError: false };
    } catch (error) {
      if (error instanceof ToolError) return { content: error.content as ConformanceAnswer['content'], isError: true };
      return { content: `Error: ${error instanceof Error ? error.message : String(error)}`, isError: true };
    }
  };
}
