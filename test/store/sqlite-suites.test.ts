/**
 * The suites that run on every store, on the SQLite store: the tool suite (encrypted, as the
 * embedded default runs), tree integrity and file history. Each store is a fresh database file.
 */
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { sqliteStores } from '../kit/stores.js';
import { runToolSuite } from '../tool/suite.js';
import { runTreeIntegritySuite } from '../tool/tree-integrity.js';
import { historySuite } from '../vault/history-suite.js';

const stores = sqliteStores('sqlite-suites');
afterAll(() => stores.cleanup());

const masterKey = randomBytes(32).toString('base64');
runToolSuite('encrypted SQLite store', stores.make, { encryption: { masterKey } });
runTreeIntegritySuite('encrypted SQLite store', stores.make, { encryption: { masterKey } }, 4);
historySuite('the SQLite store', { make: stores.make });
