/** Kept for existing imports: the vault, handler and snapshot helpers live in the test kit (test/kit/). */
export { snapshot } from './kit/stores.js';
export { callTool, memoryVault } from './kit/vault.js';
