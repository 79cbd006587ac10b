import { MemoryStore } from '../../src/store/memory.js';
import { runApiValidationSuite } from './api-validation.js';

runApiValidationSuite('memory store', async () => new MemoryStore());
