/**
 * The page's form bodies. The page sends only application/x-www-form-urlencoded forms, whose fields
 * are strings; the page's scope parses nothing else (plugin.ts), and `formOf` checks the types again
 * so that a field of another type is a 400, never a TypeError (a 500) deep in an action.
 */
import type { FastifyRequest } from 'fastify';
import { ProblemError } from '../problems.js';

export const FORM_TYPE = 'application/x-www-form-urlencoded';

export type Form = Readonly<Record<string, string>>;

/** A urlencoded body as fields; a field sent twice is ambiguous, so a 400. */
export function parseForm(body: string): Form {
  const form: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(form, key)) throw new ProblemError('invalid-request', `The form sent ${key} twice.`);
    form[key] = value;
  }
  return form;
}

/** The request's form: no body is an empty form (a post without fields); any field not text is a 400. */
export function formOf(request: FastifyRequest): Form {
  const body: unknown = request.body ?? {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ProblemError('invalid-request', 'Send the form.');
  for (const value of Object.values(body))
    if (typeof value !== 'string')
      throw new ProblemError('invalid-request', 'The form is not one this page sent; nothing was changed.');
  return body as Form;
}
