/**
 * memvault as the AI SDK's memory tool (`anthropic.tools.memory_20250818` of @ai-sdk/anthropic):
 * for generateText, streamText and agents, with the same answers as under toolRunner.
 */
import { anthropic } from '@ai-sdk/anthropic';
import type { Vault } from '../entry/vault-types.js';
import type { ResultContent } from '../tool/types.js';
import { checkOptions } from '../util/validate.js';
import { bindMemoryTool, MemoryToolResultError, type ToolAnswer } from './bound-tool.js';

type MemoryToolFactory = typeof anthropic.tools.memory_20250818;
type FactoryOptions = Parameters<MemoryToolFactory>[0];

/** The AI SDK's own options of the tool (approval, input hooks); execute and the output are memvault's. */
export type AiSdkMemoryToolOptions = Pick<
  FactoryOptions,
  'needsApproval' | 'onInputStart' | 'onInputDelta' | 'onInputAvailable'
>;
const OPTION_KEYS = ['needsApproval', 'onInputStart', 'onInputDelta', 'onInputAvailable'] as const;

/**
 * The tool `memoryTool` returns: the provider's memory tool, its output memvault's answer. Typed as
 * the provider-tool branch of the AI SDK's Tool union (what it is at run time: `type: 'provider'`,
 * `id: 'anthropic.memory_20250818'`): @ai-sdk/anthropic 3 declares the whole union, whose function
 * branch Mastra's `Agent` does not accept as a tool.
 */
export type AiSdkMemoryTool = Extract<
  ReturnType<typeof anthropic.tools.memory_20250818<ToolAnswer>>,
  { type: 'provider' }
>;

/**
 * The AI SDK checks a call's input against the provider's schema before `execute`; that schema
 * would answer some inputs the protocol allows (str_replace without new_str) or answers itself
 * (an unknown command) with the SDK's validation text. memvault validates every input, so the
 * tool accepts any object and the model reads memvault's (the protocol's) wording.
 */
const anyInput = {
  [Symbol.for('vercel.ai.schema')]: true,
  _type: undefined,
  jsonSchema: { type: 'object' },
  validate: (value: unknown) => ({ success: true, value }),
};

/**
 * `anthropic.tools.memory_20250818({ execute })` backed by the vault, for one user (bound here,
 * never taken from the model). Errors reach the model as error results with the protocol's text;
 * an image `view` reaches it as an image block; an aborted call that has not started is cancelled.
 */
export function memoryTool(vault: Vault, userId: string, options?: AiSdkMemoryToolOptions): AiSdkMemoryTool {
  const checked = checkOptions('memoryTool (memvault/ai-sdk)', options, OPTION_KEYS, { code: 'CONFIG' });
  const run = bindMemoryTool(vault, userId, 'memoryTool (memvault/ai-sdk)');
  const imagePart = imagePartFor(anthropic.specificationVersion);
  const tool = anthropic.tools.memory_20250818<ToolAnswer>({
    ...(checked as AiSdkMemoryToolOptions),
    execute: async (input, { abortSignal }) => {
      const answer = await run(input, abortSignal);
      // A thrown error is what the AI SDK sends as an error result (is_error, its message verbatim).
      if (answer.isError) throw new MemoryToolResultError(answer.content);
      return answer;
    },
    // The AI SDK passes { output }; Mastra's agents pass the output itself (the AI SDK 5 form).
    toModelOutput: (options) => modelOutput(answerOf(options).content, imagePart),
  });
  return Object.assign(tool, { inputSchema: anyInput as unknown as AiSdkMemoryTool['inputSchema'] });
}

function answerOf(options: { output: ToolAnswer } | ToolAnswer): ToolAnswer {
  return 'output' in options ? options.output : options;
}

type ModelOutput = Awaited<ReturnType<NonNullable<AiSdkMemoryTool['toModelOutput']>>>;

type ContentPart = Extract<ModelOutput, { type: 'content' }>['value'][number];
type ImageSource = { media_type: string; data: string };

/**
 * An image block as the installed line takes it: a `file` part from @ai-sdk/anthropic 4 on (which
 * warns that `image-data` is deprecated), `image-data` on line 3 (which has no `file` part).
 */
function imagePartFor(specificationVersion: string): (source: ImageSource) => ContentPart {
  if (specificationVersion === 'v3')
    return (source) => ({ type: 'image-data', data: source.data, mediaType: source.media_type });
  return (source) => ({ type: 'file', mediaType: source.media_type, data: { type: 'data', data: source.data } });
}

function modelOutput(content: ResultContent, imagePart: (source: ImageSource) => ContentPart): ModelOutput {
  if (typeof content === 'string') return { type: 'text', value: content };
  return {
    type: 'content',
    value: content.map((block) =>
      block.type === 'text' ? { type: 'text' as const, text: block.text } : imagePart(block.source),
    ),
  };
}
