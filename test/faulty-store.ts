/** The fault-injecting store lives in the test kit (test/kit/stores.ts). */
export { FaultyStore } from './kit/stores.js';
