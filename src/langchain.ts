/**
 * The `memvault/langchain` entry point: memvault as LangChain.js's memory tool. Needs the optional
 * peers @langchain/anthropic and @langchain/core; the other entry points never load them.
 */
export { memoryTool, type LangChainMemoryTool, type LangChainMemoryToolOptions } from './frameworks/langchain.js';
