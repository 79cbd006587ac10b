/**
 * The service's routes as data: method, URL, whether a credential is needed, and the schemas of what
 * goes in and out. app.ts registers them with Fastify (which validates query strings and headers by
 * them) and openapi.ts renders the same table as OpenAPI 3.1, so the description cannot drift.
 */
import { PROBLEMS } from './problems.js';

export type JsonSchema = Record<string, unknown>;

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Fastify's spelling ('*' for the rest of the path). */
  url: string;
  /** The OpenAPI spelling, when it differs ('{path}' for '*'). */
  openapiPath?: string;
  /** Fastify validates the body by `body` (off for the tool input, which the vault checks itself). */
  validateBody?: boolean;
  operationId: string;
  summary: string;
  /** Needs a verified caller (every route except health, readiness and this description). */
  auth: boolean;
  /** The query parameters the route takes; without one, NO_QUERY (any parameter is a 400). */
  query?: JsonSchema;
  params?: JsonSchema;
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

/**
 * The query of a route that takes no parameters: any parameter is refused (400), never ignored, so a
 * `?version=1` or `?dry_run=true` the route does not know cannot pass for one it acted on.
 */
export const NO_QUERY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };

/** Every route refuses a query parameter it does not define. */
const UNKNOWN_QUERY = 'a query parameter the route does not define';
const capital = (text: string) => text[0]!.toUpperCase() + text.slice(1);

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

const pathParameter: JsonSchema = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'The memory path without its leading slash, e.g. memories/notes.md.' },
  },
  required: ['path'],
};

/**
 * Memvault-User plus a write's condition headers (no Idempotency-Key: a conditional write is safe to
 * retry as it is; a retry of one that landed answers 412, and a GET shows the content).
 */
function conditionHeaders(ifMatch: string, ifNoneMatch?: string): JsonSchema {
  const properties = userHeaders['properties'] as Record<string, JsonSchema>;
  return {
    type: 'object',
    properties: {
      'memvault-user': properties['memvault-user'],
      'if-match': { type: 'string', description: ifMatch },
      ...(ifNoneMatch !== undefined ? { 'if-none-match': { type: 'string', description: ifNoneMatch } } : {}),
    },
  };
}

const writeResult: JsonSchema = {
  type: 'object',
  required: ['path', 'content'],
  properties: {
    path: { type: 'string' },
    content: { type: 'string', description: "The vault's answer, as the model would read it." },
  },
};

const fileEntry: JsonSchema = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    size: { type: 'integer' },
    modified_at: { type: 'string', format: 'date-time' },
  },
};

export const FILE_ROUTES: readonly RouteSpec[] = [
  {
    method: 'GET',
    url: '/v1/files',
    operationId: 'listFiles',
    summary: "The caller's files below a prefix (plaintext sizes), at most 10,000.",
    auth: true,
    headers: userHeaders,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        prefix: {
          type: 'string',
          maxLength: 4096,
          description: 'A directory, e.g. memories/notes (default memories).',
        },
        depth: {
          type: 'integer',
          minimum: 1,
          maximum: 64,
          description: 'Levels below the prefix to list (default all).',
        },
      },
    },
    responses: {
      '200': {
        description: 'The files.',
        schema: {
          type: 'object',
          properties: { data: { type: 'array', items: fileEntry }, truncated: { type: 'boolean' } },
        },
      },
      '400': { description: `The prefix is not a memory path, a bad depth, or ${UNKNOWN_QUERY} (problem+json).` },
      ...authProblems,
    },
  },
  {
    method: 'GET',
    url: '/v1/files/*',
    openapiPath: '/v1/files/{path}',
    operationId: 'readFile',
    summary:
      "One file's bytes, with an ETag (the content's SHA-256). A path ending in /versions lists that file's versions instead.",
    auth: true,
    headers: userHeaders,
    params: pathParameter,
    responses: {
      '200': {
        description: 'The file (application/octet-stream), or its versions (JSON).',
        schema: { type: 'string', format: 'binary' },
        contentType: 'application/octet-stream',
      },
      '304': { description: 'If-None-Match named the current ETag.' },
      '400': { description: `Not a memory path, or ${UNKNOWN_QUERY} (problem+json).` },
      ...authProblems,
      '404': { description: 'No file there (problem+json).' },
    },
  },
  {
    method: 'PUT',
    url: '/v1/files/*',
    openapiPath: '/v1/files/{path}',
    operationId: 'writeFile',
    summary:
      "Write a file's text: with If-Match (the ETag read) it replaces exactly that version, with If-None-Match: * it creates the file only. The model's create command, through the same chain (guard, PII, quotas) and audited with the caller as actor.",
    auth: true,
    headers: conditionHeaders(
      'The ETag you read (GET /v1/files/{path}): the write lands only on that version.',
      '* : create the file only if there is none.',
    ),
    params: pathParameter,
    // Checked by the handler, which names the one shape it takes in its problem's detail.
    validateBody: false,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['content'],
      properties: { content: { type: 'string', description: "The file's new text (UTF-8)." } },
    },
    responses: {
      '200': { description: 'Replaced (If-Match).', schema: writeResult },
      '201': { description: 'Created (If-None-Match: *).', schema: writeResult },
      '400': {
        description: `Not a memory path, a malformed condition or body, or ${UNKNOWN_QUERY} (problem+json).`,
      },
      ...authProblems,
      '409': { description: 'Too many concurrent changes of the file; retry (problem+json).' },
      '412': {
        description:
          'The file is not the version named (or exists, with If-None-Match: *); nothing changed (problem+json).',
      },
      '422': {
        description:
          'The vault refused the content (PII policy, quota, size, a directory there); detail says why (problem+json).',
      },
      '428': { description: 'Neither If-Match nor If-None-Match was sent (problem+json).' },
    },
  },
  {
    method: 'DELETE',
    url: '/v1/files/*',
    openapiPath: '/v1/files/{path}',
    operationId: 'deleteFile',
    summary:
      "Delete a file, only if it is still the version read (If-Match). The model's delete command, through the same chain and audited with the caller as actor.",
    auth: true,
    headers: conditionHeaders('The ETag you read: the delete takes only that version.'),
    params: pathParameter,
    responses: {
      '200': { description: 'Deleted.', schema: writeResult },
      '400': { description: `Not a memory path, a malformed If-Match, or ${UNKNOWN_QUERY} (problem+json).` },
      ...authProblems,
      '412': { description: 'The file is not the version named, or is gone; nothing changed (problem+json).' },
      '428': { description: 'If-Match was not sent (problem+json).' },
    },
  },
  {
    method: 'POST',
    url: '/v1/restore',
    operationId: 'restore',
    summary:
      "Restore a file, a directory or (no path) the caller's whole memory as of a time; each restored file is a new version. Audited with the caller as actor.",
    auth: true,
    headers: userHeaders,
    validateBody: true,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['as_of'],
      properties: {
        path: { type: 'string', maxLength: 4096 },
        as_of: {
          type: 'string',
          format: 'date-time',
          maxLength: 64,
          description: 'RFC 3339 date-time with a timezone (Z or an offset), e.g. 2026-03-07T12:00:00Z.',
        },
        dry_run: { type: 'boolean', description: 'true: only report what would change. A boolean, nothing else.' },
      },
    },
    responses: {
      '200': { description: 'What was (or, in a dry run, would be) restored.', schema: { type: 'object' } },
      '400': {
        description: `A bad path, a date that is not a strict RFC 3339 date-time, an argument of the wrong type (never coerced), file history off, or ${UNKNOWN_QUERY} (problem+json).`,
      },
      ...authProblems,
    },
  },
  {
    method: 'GET',
    url: '/v1/export',
    operationId: 'exportMemory',
    summary: "The caller's files and versions as a tar (format memvault-user-export v2). Audited.",
    auth: true,
    headers: userHeaders,
    responses: {
      '200': {
        description: 'The tar archive.',
        schema: { type: 'string', format: 'binary' },
        contentType: 'application/x-tar',
      },
      '400': { description: `${capital(UNKNOWN_QUERY)} (problem+json).` },
      ...authProblems,
      '404': { description: 'Nothing stored for this user (problem+json).' },
    },
  },
  {
    method: 'DELETE',
    url: '/v1/me',
    operationId: 'forgetMe',
    summary:
      "Erase the caller's memory for good (crypto-erasure). Only a user's own token issued in the last 300 s, with ?confirm=forget-me. Audited.",
    auth: true,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { confirm: { type: 'string', maxLength: 64 } },
    },
    responses: {
      '200': { description: 'Erased.', schema: { type: 'object' } },
      '400': { description: `${capital(UNKNOWN_QUERY)} (problem+json).` },
      ...authProblems,
      '428': { description: 'The confirmation is missing (problem+json).' },
    },
  },
];

const CORE_ROUTES: readonly RouteSpec[] = [
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
      '400': {
        description: `The body is not JSON, not UTF-8, or nested too deep, or ${UNKNOWN_QUERY} (problem+json).`,
      },
      ...authProblems,
      '409': { description: 'The first request with this Idempotency-Key is still running (problem+json).' },
      '413': { description: 'The body is larger than the vault’s limits allow (problem+json).' },
      '415': { description: 'The body is not application/json (problem+json).' },
      '422': {
        description:
          'The Idempotency-Key was used with another request, or its first result cannot be read back (problem+json).',
      },
      '503': { description: 'The service is shutting down (problem+json).' },
    },
  },
  {
    method: 'GET',
    url: '/healthz',
    operationId: 'health',
    summary: 'The process is up.',
    auth: false,
    responses: {
      '200': { description: 'Up.', schema: { type: 'object', properties: { status: { const: 'ok' } } } },
      '400': { description: `${capital(UNKNOWN_QUERY)} (problem+json).` },
    },
  },
  {
    method: 'GET',
    url: '/readyz',
    operationId: 'readiness',
    summary: 'The store answers and the configured key opens the deployment record (checked at most every 5 s).',
    auth: false,
    responses: {
      '200': { description: 'Ready.', schema: { type: 'object', properties: { status: { const: 'ready' } } } },
      '400': { description: `${capital(UNKNOWN_QUERY)} (problem+json).` },
      '503': {
        description:
          'The store does not answer (unavailable), the key does not open the deployment (key-unavailable), or the service is shutting down (problem+json).',
      },
    },
  },
  {
    method: 'GET',
    url: '/openapi.json',
    operationId: 'openapi',
    summary: 'This description (OpenAPI 3.1).',
    auth: false,
    responses: {
      '200': { description: 'The OpenAPI document.', schema: { type: 'object' } },
      '400': { description: `${capital(UNKNOWN_QUERY)} (problem+json).` },
    },
  },
];

export const ROUTES: readonly RouteSpec[] = [...CORE_ROUTES, ...FILE_ROUTES];
