/**
 * The `memvault/ai-sdk` entry point: memvault as the Vercel AI SDK's memory tool. Needs the
 * optional peer @ai-sdk/anthropic; the other entry points never load it.
 */
export { memoryTool, type AiSdkMemoryTool, type AiSdkMemoryToolOptions } from './frameworks/ai-sdk.js';
