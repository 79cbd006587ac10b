/** The page's form bodies (src/serve/page/form.ts): only text fields reach an action. */
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { formOf, parseForm } from '../../src/serve/page/form.js';
import { ProblemError } from '../../src/serve/problems.js';

const request = (body: unknown) => ({ body }) as FastifyRequest;

function statusOf(run: () => unknown): number | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof ProblemError ? error.problem.status : 500;
  }
}

describe('the page reads a form', () => {
  it('as its text fields; no body is an empty form (the CSRF check refuses it)', () => {
    expect(formOf(request(parseForm('csrf=t&path=memories%2Fa.md')))).toEqual({ csrf: 't', path: 'memories/a.md' });
    expect(formOf(request(undefined))).toEqual({});
  });

  it('refuses a field sent twice or a field that is not text with a 400, never a 500', () => {
    expect(statusOf(() => parseForm('csrf=a&csrf=b'))).toBe(400);
    for (const body of [{ confirm: 5 }, { path: ['a'] }, { text: null }, { base: {} }, [], 'csrf=t', 7])
      expect(
        statusOf(() => formOf(request(body))),
        JSON.stringify(body),
      ).toBe(400);
  });
});
