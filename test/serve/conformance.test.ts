// Acceptance: the conformance conversation over POST /v1/memory (real HTTP, fetch) answers exactly
// what toolRunner's handlers answer on a vault of the same options.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemvaultServer } from '../../src/serve.js';
import type { Vault } from '../../src/memvault.js';
import {
  runConformance,
  seedConformance,
  viaToolRunner,
  conformanceMismatches,
  type ConformanceAnswer,
} from '../kit/conformance.js';
import { memoryVault } from '../kit/vault.js';
import { bearer, startIdp, testServer, type TestIdp } from './helpers.js';

let idp: TestIdp;
let server: MemvaultServer;
let served: Vault;
let reference: Vault;
let url: string;

beforeAll(async () => {
  idp = await startIdp();
  ({ server, vault: served } = await testServer(idp));
  reference = (await memoryVault()).vault;
  url = await server.listen({ port: 0 });
});

afterAll(async () => {
  await server.close();
  await served.close();
  await reference.close();
  await idp.close();
});

describe('the conformance conversation over HTTP', () => {
  it('gives the same results as toolRunner', async () => {
    await seedConformance(served, 'carol');
    await seedConformance(reference, 'carol');
    const token = await idp.sign({ sub: 'carol' });
    const overHttp = await runConformance(async (input) => {
      const response = await fetch(`${url}/v1/memory`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify(input),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { content: ConformanceAnswer['content']; is_error: boolean };
      return { content: body.content, isError: body.is_error };
    });
    const viaRunner = await runConformance(viaToolRunner(reference, 'carol'));
    expect(overHttp).toEqual(viaRunner);
    expect(conformanceMismatches(overHttp)).toEqual([]);
  });
});
