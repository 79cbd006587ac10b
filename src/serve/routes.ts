/**
 * The service's routes as data: method, URL, whether a credential is needed, and the schemas of what
 * goes in and out. app.ts registers them with Fastify (which validates query strings and headers by
 * them) and openapi.ts renders the same table as OpenAPI 3.1, so the description cannot drift.
 */
import { PROBLEMS } from './problems.js';

export type JsonSchema = Record<string, unknown>;

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  operationId: string;
  summary: string;
  /** Needs a verified caller (every route except health, readiness and this description). */
  auth: boolean;
  query?: JsonSchema;
  headers?: JsonSchema;
  body?: JsonSchema;
  /** Status -> description and, when it has one, its JSON schema. */
  responses: Record<string, { description: string; schema?: JsonSchema; contentType?: string }>;
}

const toolResult: JsonSchema = {
  type: 'object',
  required: ['content', 'is_error'],
  properties: {
    content: {
      description: "What the model reads: the tool result's text, or content blocks (an image file's view).",
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }],
    },
    is_error: {
      type: 'boolean',
      description: 'true: send the result to the model as an error (is_error on the tool_result).',
    },
  },
};

export const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', enum: Object.keys(PROBLEMS).map((name) => `urn:memvault:problem:${name}`) },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
  },
};

const authProblems = {
  '401': { description: 'No credential, or one that does not verify (problem+json).' },
  '403': { description: 'The credential may not do this, e.g. an API key without act-as (problem+json).' },
  '429': { description: 'Rate limit of this credential reached (problem+json, Retry-After).' },
};

const userHeaders: JsonSchema = {
  type: 'object',
  properties: {
    'memvault-user': {
      type: 'string',
      description:
        'With a service API key that has the act-as scope: the user to act for. With a user token: absent, or that same user.',
    },
    'idempotency-key': {
      type: 'string',
      description: 'Runs the command at most once per user and key for 24 hours; a retry answers the first result.',
    },
  },
};

export const ROUTES: readonly RouteSpec[] = [
  {
    method: 'POST',
    url: '/v1/memory',
    operationId: 'runMemoryCommand',
    summary: 'Run one memory tool command (the tool input the model sent) for the caller’s user.',
    auth: true,
    headers: userHeaders,
    body: {
      type: 'object',
      description: 'The memory_20250818 tool input, exactly as the model sent it (command, path, ...).',
      required: ['command'],
      properties: {
        command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] },
      },
    },
    responses: {
      '200': {
        description: 'The tool result, as vault.run gives it (errors of the command are is_error: true).',
        schema: toolResult,
      },
      '400': { description: 'The body is not JSON, not UTF-8, or nested too deep (problem+json).' },
      ...authProblems,
      '409': { description: 'The first request with this Idempotency-Key is still running (problem+json).' },
      '413': { description: 'The body is larger than the vault’s limits allow (problem+json).' },
      '415': { description: 'The body is not application/json (problem+json).' },
      '422': { description: 'The Idempotency-Key was used with another request (problem+json).' },
      '503': { description: 'The service is shutting down (problem+json).' },
    },
  },
  {
    method: 'GET',
    url: '/healthz',
    operationId: 'health',
    summary: 'The process is up.',
    auth: false,
    responses: { '200': { description: 'Up.', schema: { type: 'object', properties: { status: { const: 'ok' } } } } },
  },
  {
    method: 'GET',
    url: '/readyz',
    operationId: 'readiness',
    summary: 'The store answers (the vault opened its key at start-up).',
    auth: false,
    responses: {
      '200': { description: 'Ready.', schema: { type: 'object', properties: { status: { const: 'ready' } } } },
      '503': { description: 'The store does not answer, or the service is shutting down (problem+json).' },
    },
  },
  {
    method: 'GET',
    url: '/openapi.json',
    operationId: 'openapi',
    summary: 'This description (OpenAPI 3.1).',
    auth: false,
    responses: { '200': { description: 'The OpenAPI document.', schema: { type: 'object' } } },
  },
];
