// openapi.json (checked in) is what GET /openapi.json answers, generated from the route table.
// Regenerate: npx tsx -e "import('./src/serve.js').then(m=>process.stdout.write(JSON.stringify(m.openApiDocument('1'),null,2)+'\n'))" > openapi.json
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openApiDocument, PROBLEMS } from '../../src/serve.js';
import { memoryVault } from '../kit/vault.js';
import { startIdp, testServer } from './helpers.js';

describe('openapi.json', () => {
  it('is checked in as the server generates and serves it, every route and problem described', async () => {
    const checkedIn = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(checkedIn).toEqual(openApiDocument('1'));
    expect(checkedIn['openapi']).toBe('3.1.0');
    const paths = checkedIn['paths'] as Record<string, Record<string, { security?: unknown[] }>>;
    expect(Object.keys(paths).sort()).toEqual([
      '/healthz',
      '/openapi.json',
      '/readyz',
      '/v1/export',
      '/v1/files',
      '/v1/files/{path}',
      '/v1/me',
      '/v1/memory',
      '/v1/restore',
    ]);
    expect(paths['/v1/memory']!['post']!.security).toBeUndefined();
    expect(paths['/healthz']!['get']!.security).toEqual([]);
    // Every route refuses a query parameter it does not define (app.ts), so every operation says so.
    for (const [path, operations] of Object.entries(paths))
      for (const [method, operation] of Object.entries(operations)) {
        const bad = (operation as { responses: Record<string, { description: string }> }).responses['400'];
        expect(bad?.description, `${method} ${path}`).toMatch(/query parameter the route does not define/i);
      }
    const restore = paths['/v1/restore']!['post'] as unknown as {
      requestBody: { content: { 'application/json': { schema: { properties: Record<string, unknown> } } } };
    };
    expect(restore.requestBody.content['application/json'].schema.properties['as_of']).toMatchObject({
      type: 'string',
      format: 'date-time',
    });
    const types = JSON.stringify(checkedIn);
    for (const name of Object.keys(PROBLEMS)) expect(types).toContain(`urn:memvault:problem:${name}`);
    const idp = await startIdp();
    const { server, vault } = await testServer(idp, {}, (await memoryVault()).vault);
    try {
      expect((await server.fastify.inject({ url: '/openapi.json' })).json()).toEqual(checkedIn);
    } finally {
      await server.close();
      await vault.close();
      await idp.close();
    }
  });
});
