/**
 * The caller's files as resources (shaped like managed memory stores): list, read (ETag: the
 * content's SHA-256), versions, restore, export, erasure. `{path}` is the memory path without its
 * leading slash, checked by the path guard's own canonicalisation. Reads go through the host's view of
 * the files; restore, export and erasure are the vault's audited lifecycle operations with the caller
 * as actor. A file's write (PUT) and delete (DELETE) are the model's create and delete commands run by
 * vault.run with the caller's condition (If-Match: the ETag read; If-None-Match: *) and the caller
 * as actor, so they pass the same chain (guard, PII, quotas, audit) and change nothing on a mismatch (412).
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isMemvaultError, type ErrorCode } from '../errors.js';
import type { Vault } from '../memvault.js';
import type { CommandResult, Precondition } from '../pipeline/context.js';
import { canonicalizePath } from '../pipeline/path-guard.js';
import { parseRfc3339 } from '../util/date-time.js';
import type { Caller } from './identity.js';
import { DEFAULT_CLOCK_SKEW_SECONDS } from './jwt.js';
import { ProblemError, type ProblemName } from './problems.js';

/** Entries one listing answers at most (then `truncated: true`). */
export const MAX_LISTED_FILES = 10_000;
/** How recently a user's token must have been issued for erasure (seconds). */
export const FRESH_CREDENTIAL_SECONDS = 300;
export const ERASURE_CONFIRMATION = 'forget-me';
export const VERSIONS_SUFFIX = '/versions';

/**
 * Whose change a file write is, for the file's history and the pause: the person's own token is the
 * person, a service key (or local development) the host; any other kind counts as the model's, so a
 * paused memory refuses it (fail closed).
 */
function writerOf(caller: Caller): 'person' | 'host' | 'model' {
  if (caller.kind === 'user-token') return 'person';
  return caller.kind === 'service-key' || caller.kind === 'development' ? 'host' : 'model';
}

function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new ProblemError('unauthorized', 'Send a credential.');
  return request.caller;
}

/** `memories/a/b.md` (the URL's spelling) as the guard's canonical `/memories/a/b.md`, or a 400. */
export function memoryPathOf(urlPath: string): string {
  try {
    return canonicalizePath(`/${urlPath}`);
  } catch {
    throw new ProblemError('invalid-request', 'The path is not a valid memory path (/memories/...).');
  }
}

/** The vault's typed errors as problems; anything else is rethrown (a 500 without detail). */
function vaultProblem(error: unknown): never {
  if (isMemvaultError(error, 'NOT_FOUND'))
    throw new ProblemError('not-found', 'Nothing is stored there for this user.');
  if (isMemvaultError(error, 'INVALID_PATH') || isMemvaultError(error, 'INVALID_INPUT'))
    throw new ProblemError('invalid-request', 'The path or an argument is not valid.');
  if (isMemvaultError(error, 'CONFIG'))
    throw new ProblemError(
      'invalid-request',
      'This deployment does not offer that (file history or encryption is off).',
    );
  throw error;
}

export function etagOf(data: Uint8Array): string {
  return `"sha256:${createHash('sha256').update(data).digest('hex')}"`;
}

const OUR_ETAG = /^"sha256:([0-9a-f]{64})"$/;

/** The content hash an If-Match names: exactly one strong ETag as this service gives them, or a 400. */
function hashOfIfMatch(header: string): string {
  const hash = OUR_ETAG.exec(header.trim())?.[1];
  if (hash === undefined)
    throw new ProblemError('invalid-request', 'If-Match must be one ETag as GET /v1/files/{path} gives it.');
  return hash;
}

/** PUT: If-Match (replace exactly that version) or If-None-Match: * (create only); one of them, or a 428. */
function writeCondition(request: FastifyRequest): Precondition {
  const ifMatch = request.headers['if-match'];
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifMatch !== undefined && ifNoneMatch !== undefined)
    throw new ProblemError('invalid-request', 'Send If-Match or If-None-Match, not both.');
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() !== '*') throw new ProblemError('invalid-request', 'If-None-Match on a write must be *.');
    return { ifNoneMatch: '*' };
  }
  if (ifMatch === undefined)
    throw new ProblemError(
      'precondition-required',
      'Send If-Match with the ETag you read (or If-None-Match: * to create), so no edit is overwritten.',
    );
  return { ifMatch: hashOfIfMatch(ifMatch) };
}

/** The body of a PUT: exactly `{"content": <string>}`, or a 400 (no coercion, no extra member). */
function contentOf(body: unknown): string {
  const content = (body as { content?: unknown } | null)?.content;
  if (
    typeof body !== 'object' ||
    Array.isArray(body) ||
    Object.keys(body as object).length !== 1 ||
    typeof content !== 'string'
  )
    throw new ProblemError('invalid-request', 'The body must be {"content": "<the file\'s text>"}.');
  return content;
}

interface RestoreArgs {
  asOf: Date;
  path?: string;
  dryRun?: boolean;
}

/**
 * The body of a restore, its types checked exactly (the route's schema too, without coercion): a
 * dry_run that is not a boolean or an as_of that is not a strict RFC 3339 date-time is a 400, never
 * a default that turns a preview into a restore or a date nobody meant.
 */
export function restoreArgsOf(body: unknown): RestoreArgs {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ProblemError(
      'invalid-request',
      'The body must be {"as_of": "<RFC 3339 date-time>"} with path and dry_run optional.',
    );
  const { path, as_of: asOfText, dry_run: dryRun, ...rest } = body as Record<string, unknown>;
  if (Object.keys(rest).length > 0)
    throw new ProblemError('invalid-request', 'A restore takes path, as_of and dry_run only.');
  const asOf = parseRfc3339(asOfText);
  if (asOf === undefined)
    throw new ProblemError(
      'invalid-request',
      'as_of must be an RFC 3339 date-time with a timezone that exists, e.g. 2026-03-07T12:00:00Z.',
    );
  if (dryRun !== undefined && typeof dryRun !== 'boolean')
    throw new ProblemError('invalid-request', 'dry_run must be true or false.');
  if (path !== undefined && typeof path !== 'string')
    throw new ProblemError('invalid-request', 'path must be a memory path (a string), or left out.');
  return {
    asOf,
    ...(path !== undefined ? { path: memoryPathOf(path) } : {}),
    ...(dryRun !== undefined ? { dryRun } : {}),
  };
}

/** A command's typed error as the problem a resource client expects; its detail is the vault's own text. */
const PROBLEM_OF_CODE: Partial<Record<ErrorCode, ProblemName>> = {
  VERSION_MISMATCH: 'precondition-failed',
  NOT_FOUND: 'not-found',
  INVALID_PATH: 'invalid-request',
  INVALID_INPUT: 'invalid-request',
  CONFLICT: 'conflict',
  STORE_UNAVAILABLE: 'unavailable',
  KEY_UNAVAILABLE: 'unavailable',
  INTEGRITY: 'internal',
  INTERNAL: 'internal',
};

function commandProblem(result: CommandResult): never {
  const name = (result.code && PROBLEM_OF_CODE[result.code]) ?? 'refused';
  // The model-facing text names only the caller's own path; the infrastructure codes get a fixed detail.
  const detail =
    name === 'internal' || name === 'unavailable'
      ? 'The store did not complete the change; nothing of it is reported here. Retry it.'
      : typeof result.content === 'string'
        ? result.content
        : 'The change was refused.';
  throw new ProblemError(name, detail);
}

/** `issuedAtSkewSeconds`: how far in the future a token's iat may be (the JWT's clock skew on exp and nbf). */
export function fileRoutes(vault: Vault, issuedAtSkewSeconds = DEFAULT_CLOCK_SKEW_SECONDS) {
  async function list(request: FastifyRequest<{ Querystring: { prefix?: string; depth?: number } }>) {
    const caller = callerOf(request);
    const dir = memoryPathOf(request.query.prefix ?? 'memories');
    const depth = request.query.depth;
    const base = dir === '/memories' ? 2 : dir.split('/').length;
    const files = await vault.files(caller.userId);
    const data: { path: string; size: number; modified_at: string }[] = [];
    let truncated = false;
    try {
      for await (const file of files.listFiles(dir)) {
        if (depth !== undefined && file.path.split('/').length - base >= depth + 1) continue;
        if (data.length === MAX_LISTED_FILES) {
          truncated = true;
          break;
        }
        data.push({ path: file.path.slice(1), size: file.size, modified_at: file.lastModified.toISOString() });
      }
    } catch (error) {
      vaultProblem(error);
    }
    // Encrypted names list in key order, not path order: sort the (bounded) page by path.
    data.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { data, truncated };
  }

  async function read(request: FastifyRequest<{ Params: { '*': string } }>, reply: FastifyReply) {
    const caller = callerOf(request);
    const raw = request.params['*'];
    if (raw.endsWith(VERSIONS_SUFFIX)) return versions(caller, raw.slice(0, -VERSIONS_SUFFIX.length));
    const path = memoryPathOf(raw);
    let file;
    try {
      file = await (await vault.files(caller.userId)).read(path);
    } catch (error) {
      vaultProblem(error);
    }
    if (!file) throw new ProblemError('not-found', 'No file at this path.');
    const etag = etagOf(file.data);
    void reply.headers({
      etag,
      'last-modified': file.lastModified.toUTCString(),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/octet-stream').send(Buffer.from(file.data));
  }

  async function versions(caller: Caller, raw: string) {
    const path = memoryPathOf(raw);
    try {
      const { versions: found, truncated } = await vault.history(caller.userId, path, { actor: caller.actor });
      return {
        data: found.map((v) => ({
          path: v.path.slice(1),
          seq: v.seq,
          actor: v.actor,
          time: v.time.toISOString(),
          size: v.size,
          ...(v.end ? { end: v.end } : {}),
        })),
        truncated,
      };
    } catch (error) {
      vaultProblem(error);
    }
  }

  async function restore(request: FastifyRequest<{ Body: unknown }>) {
    const caller = callerOf(request);
    const args = restoreArgsOf(request.body);
    try {
      const result = await vault.restore(caller.userId, { ...args, actor: caller.actor });
      return {
        as_of: result.asOf.toISOString(),
        dry_run: result.dryRun,
        files: result.files.map((f) => ({ ...f, path: f.path.slice(1) })),
        restored: result.restored,
        deleted: result.deleted,
        unchanged: result.unchanged,
        conflicts: result.conflicts,
      };
    } catch (error) {
      vaultProblem(error);
    }
  }

  async function exportArchive(request: FastifyRequest, reply: FastifyReply) {
    const caller = callerOf(request);
    let archive;
    try {
      archive = await vault.exportUser(caller.userId, { actor: caller.actor });
    } catch (error) {
      vaultProblem(error);
    }
    // A failure part way errors the stream, which cuts the response off (never a partial 200 that looks whole).
    archive.done.catch(() => undefined);
    return reply
      .headers({ 'cache-control': 'no-store', 'content-disposition': 'attachment; filename="memvault-export.tar"' })
      .type('application/x-tar')
      .send(archive.stream);
  }

  async function erase(request: FastifyRequest<{ Querystring: { confirm?: string } }>) {
    const caller = callerOf(request);
    if (caller.kind !== 'user-token' && caller.kind !== 'development')
      throw new ProblemError(
        'forbidden',
        "Erasure is the user's own act (their token) or the operator's (memvault user forget).",
      );
    if (request.query.confirm !== ERASURE_CONFIRMATION)
      throw new ProblemError('precondition-required', `Confirm the erasure with ?confirm=${ERASURE_CONFIRMATION}.`);
    // Fresh: issued in the last 300 s, and not later than now (give or take the clock skew): an iat
    // in the future would otherwise keep a token "fresh" for as long as it lives.
    const age = caller.issuedAt === undefined ? undefined : Math.floor(Date.now() / 1000) - caller.issuedAt;
    if (
      caller.kind === 'user-token' &&
      (age === undefined || age > FRESH_CREDENTIAL_SECONDS || age < -issuedAtSkewSeconds)
    )
      throw new ProblemError(
        'forbidden',
        `Erasure needs a token issued in the last ${FRESH_CREDENTIAL_SECONDS} seconds; sign in again.`,
      );
    try {
      const result = await vault.forgetUser(caller.userId, { actor: caller.actor });
      return { erased: true, key_deleted: result.keyDeleted, objects_deleted: result.objectsDeleted };
    } catch (error) {
      vaultProblem(error);
    }
  }

  async function write(request: FastifyRequest<{ Params: { '*': string }; Body: unknown }>, reply: FastifyReply) {
    const caller = callerOf(request);
    const path = memoryPathOf(request.params['*']);
    const precondition = writeCondition(request);
    const input = { command: 'create', path, file_text: contentOf(request.body) };
    const result = await vault.run(caller.userId, input, {
      precondition,
      actor: caller.actor,
      writer: writerOf(caller),
    });
    if (result.isError) commandProblem(result);
    void reply.code('ifNoneMatch' in precondition ? 201 : 200).header('cache-control', 'no-store');
    return { path: path.slice(1), content: result.content };
  }

  async function remove(request: FastifyRequest<{ Params: { '*': string } }>) {
    const caller = callerOf(request);
    const path = memoryPathOf(request.params['*']);
    const ifMatch = request.headers['if-match'];
    if (ifMatch === undefined)
      throw new ProblemError('precondition-required', 'Send If-Match with the ETag you read, so no edit is deleted.');
    const precondition = { ifMatch: hashOfIfMatch(ifMatch) };
    const result = await vault.run(
      caller.userId,
      { command: 'delete', path },
      { precondition, actor: caller.actor, writer: writerOf(caller) },
    );
    if (result.isError) commandProblem(result);
    return { path: path.slice(1), content: result.content };
  }

  return { list, read, write, remove, restore, exportArchive, erase };
}
