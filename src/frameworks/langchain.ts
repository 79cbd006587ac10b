/**
 * memvault as LangChain's memory tool (`memory_20250818` of @langchain/anthropic): bindable to
 * ChatAnthropic and usable in LangChain and LangGraph agents, with toolRunner's answers.
 */
import { tools } from '@langchain/anthropic';
import { ToolMessage } from '@langchain/core/messages';
import type { Vault } from '../entry/vault-types.js';
import type { ResultContent } from '../tool/types.js';
import { checkOptions } from '../util/validate.js';
import { bindMemoryTool, MemoryToolResultError } from './bound-tool.js';

/** LangChain's run options of the tool (tracing tags and metadata). */
export interface LangChainMemoryToolOptions {
  tags?: string[];
  metadata?: Record<string, unknown>;
}
const OPTION_KEYS = ['tags', 'metadata'] as const;

/** What LangChain passes a tool's function besides the input (RunnableConfig with the tool call). */
interface ToolRunConfig {
  signal?: AbortSignal;
  toolCall?: { id?: string };
}

export type LangChainMemoryTool = ReturnType<typeof tools.memory_20250818>;

/**
 * The provider tool's zod schema would answer some inputs the protocol allows (str_replace without
 * new_str) with LangChain's parsing error; memvault validates every input itself, so the tool takes
 * any object (a JSON schema, which LangChain checks, not the one the API sees: that is the provider's).
 */
const ANY_OBJECT = { type: 'object' } as const;

/**
 * `memory_20250818({ execute })` backed by the vault, for one user (bound here, never taken from
 * the model). A result is returned as a ToolMessage: an error one with status 'error' and the
 * protocol's exact text (a thrown error would reach the model as ToolNode's "Please fix your
 * mistakes" text), an image view as an image block.
 */
export function memoryTool(vault: Vault, userId: string, options?: LangChainMemoryToolOptions): LangChainMemoryTool {
  const checked = checkOptions('memoryTool (memvault/langchain)', options, OPTION_KEYS, {
    code: 'CONFIG',
  }) as LangChainMemoryToolOptions;
  const run = bindMemoryTool(vault, userId, 'memoryTool (memvault/langchain)');
  // LangChain calls execute with (input, config); the provider's type names the input only.
  const execute = async (input: unknown, config?: ToolRunConfig): Promise<string> => {
    const answer = await run(input, config?.signal);
    const toolCallId = config?.toolCall?.id;
    // Called without a tool call (tool.invoke(input)): the content itself, or a throw for an error.
    if (toolCallId === undefined) {
      if (answer.isError) throw new MemoryToolResultError(answer.content);
      return messageContent(answer.content) as string;
    }
    return new ToolMessage({
      tool_call_id: toolCallId,
      name: 'memory',
      content: messageContent(answer.content),
      status: answer.isError ? 'error' : 'success',
    }) as unknown as string;
  };
  const tool = tools.memory_20250818({ execute });
  tool.schema = ANY_OBJECT as unknown as typeof tool.schema;
  runArgsAsSent(tool);
  if (checked.tags) tool.tags = checked.tags;
  if (checked.metadata) tool.metadata = checked.metadata;
  return tool;
}

/**
 * invoke(toolCall) hands call() the call's args, and call() takes args with `type: 'tool_call'` for
 * a tool call itself: it would run their `args` field (a model's extra field turning a view into a
 * delete) or reject args without one. Handing call() the tool call instead, when the args are its
 * args, has it unwrap them once: the command is the input the model sent, as under vault.run.
 */
function runArgsAsSent(tool: LangChainMemoryTool): void {
  const call = tool.call.bind(tool) as (arg: unknown, config?: unknown, tags?: string[]) => Promise<unknown>;
  const asSent = (arg: unknown, config?: unknown, tags?: string[]) => {
    const toolCall = (config as { toolCall?: { type?: unknown; args?: unknown } } | undefined)?.toolCall;
    const whole = toolCall?.type === 'tool_call' && toolCall.args === arg;
    return call(whole ? toolCall : arg, config, tags);
  };
  tool.call = asSent as typeof tool.call;
}

/**
 * An image as an `image_url` block with a base64 data URL, which @langchain/anthropic turns into the
 * API's `{ type: 'image', source: { type: 'base64', ... } }` on every version in the range. An
 * Anthropic image block itself would be passed through from 1.5 on, but 1.3.0 ends the tool_result's
 * content at it (its generator returns instead of yielding): the model read the caption, no image.
 */
function messageContent(content: ResultContent): ToolMessage['content'] {
  if (typeof content === 'string') return content;
  return content.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'image_url', image_url: { url: `data:${block.source.media_type};base64,${block.source.data}` } },
  );
}
