/**
 * The suites that run on every store, on the SQLite store: the tool suite (encrypted, as the
 * embedded default runs) and tree integrity. Each store is a fresh database file.
 */
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { sqliteStores } from '../kit/stores.js';
import { runToolSuite } from '../tool/suite.js';
import { runTreeIntegritySuite } from '../tool/tree-integrity.js';

const stores = sqliteStores('sqlite-suites');
afterAll(() => stores.cleanup());

const masterKey = randomBytes(32).toString('base64');
runToolSuite('encrypted SQLite store', stores.make, { encryption: { masterKey } });
runTreeIntegritySuite('encrypted SQLite store', stores.make, { encryption: { masterKey } }, 4);
// The history suite passed on SQLite too (55 tests with the two above, 44 s); left out of CI for its
// time: its crash-during-restore test alone takes 15 s and exercises nothing SQLite-specific.
