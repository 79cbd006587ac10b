/**
 * createServer(vault, options): the HTTP service over a vault. Fastify carries the requests; every
 * route that needs a caller resolves one from its credential (identity.ts) before anything else,
 * errors are problem details (problems.ts), bodies are bounded and checked (limits.ts), and logs
 * name the route template, status and time, never a user, path or content.
 */
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Vault } from '../memvault.js';
import type { VaultLogger } from '../entry/logger.js';
import { loggableError } from '../errors.js';
import { apiKeyVerifier, type ApiKeyEntry } from './api-keys.js';
import { developmentVerifier } from './development.js';
import { IdempotencyRecords, type IdempotencyOptions } from './idempotency.js';
import { resolveCaller, type Caller, type CredentialVerifier } from './identity.js';
import { checkJwtOptions, jwtVerifier, type JwtOptions } from './jwt.js';
import { parseJsonBody, resolveLimits, type ServeLimits } from './limits.js';
import { fileRoutes } from './file-routes.js';
import { memoryRoute } from './memory-route.js';
import { openApiDocument } from './openapi.js';
import { PROBLEM_CONTENT_TYPE, problem, problemOfFrameworkError, ProblemError, type Problem } from './problems.js';
import { Readiness } from './readiness.js';
import { RateWindow } from './page/rate.js';
import { NO_QUERY, ROUTES, type JsonSchema } from './routes.js';
import { Draining } from './shutdown.js';

export interface ServeAuthOptions {
  /** Users' own bearer JWTs, verified against a JWKS. */
  jwt?: JwtOptions;
  /** Service API keys (parseApiKeys of the keys file). */
  apiKeys?: readonly ApiKeyEntry[];
  /**
   * No credential: the user is named in Memvault-User by anyone who can connect. Local development
   * only: listen() refuses any address but loopback with it.
   */
  development?: boolean;
  /** More kinds of caller (a logged-in person's session), asked after the built-in ones. */
  verifiers?: readonly CredentialVerifier[];
}

export interface ServeOptions {
  auth: ServeAuthOptions;
  limits?: Partial<ServeLimits>;
  /** The vault's file size limit (VaultOptions.limits.maxFileBytes), which bounds request bodies. */
  maxFileBytes?: number;
  /**
   * Requests per credential per window (default 600 a minute); requests whose credential fails count
   * per client address against the same budget. false turns rate limits off.
   */
  rateLimit?: { max: number; windowMs: number } | false;
  idempotency?: IdempotencyOptions;
  /** How long /readyz keeps the outcome of its check (store answers, key opens); default 5 s. */
  readyCacheMs?: number;
  logger?: VaultLogger;
}

export interface MemvaultServer {
  /** The Fastify instance (inject() in tests; hosts may add their own routes before listen). */
  readonly fastify: FastifyInstance;
  /** Starts listening; answers the URL. Development auth listens on loopback only. */
  listen(address?: { host?: string; port?: number }): Promise<string>;
  /** Graceful stop: new requests get 503, the ones in flight finish, then connections close. */
  close(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    auth?: boolean;
  }
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8787;

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function verifiersOf(auth: ServeAuthOptions): CredentialVerifier[] {
  const verifiers: CredentialVerifier[] = [];
  if (auth.apiKeys && auth.apiKeys.length > 0) verifiers.push(apiKeyVerifier(auth.apiKeys));
  if (auth.jwt) verifiers.push(jwtVerifier(auth.jwt));
  verifiers.push(...(auth.verifiers ?? []));
  if (auth.development) {
    if (verifiers.length > 0) throw new RangeError('development mode (no auth) cannot be combined with credentials');
    verifiers.push(developmentVerifier());
  }
  if (verifiers.length === 0)
    throw new RangeError('no authentication configured: give a JWKS (jwt), API keys, or development mode on loopback');
  return verifiers;
}

/**
 * The one coercion the service does: a query parameter the route's schema types as an integer, sent
 * as plain decimal digits, becomes that number before validation. Nothing else is coerced (bodies
 * are checked as sent), so `depth=x` or `depth=1.5` stays text and is a 400.
 */
function queryIntegers(schema: JsonSchema) {
  const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const integers = Object.keys(properties).filter((name) => properties[name]!['type'] === 'integer');
  return async (request: FastifyRequest) => {
    const query = request.query as Record<string, unknown>;
    for (const name of integers) {
      const value = query[name];
      if (typeof value === 'string' && /^(0|-?[1-9]\d{0,14})$/.test(value)) query[name] = Number(value);
    }
  };
}

function sendProblem(reply: FastifyReply, body: Problem, headers: Record<string, string> = {}): FastifyReply {
  return reply.code(body.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(body);
}

export async function createServer(vault: Vault, options: ServeOptions): Promise<MemvaultServer> {
  const verifiers = verifiersOf(options.auth);
  const limits = resolveLimits(options.limits, options.maxFileBytes);
  const logger = options.logger;
  const draining = new Draining();
  const app = Fastify({
    logger: false,
    bodyLimit: limits.bodyBytes,
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.requestTimeoutMs,
    return503OnClosing: false,
    // Nothing is coerced, removed or added: a body is valid as sent or it is a 400 (an argument of the
    // wrong type never becomes a default that changes data); query integers: queryIntegers.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false } },
  });
  app.decorateRequest('caller', null);
  // Results are sent as vault.run gives them; the response schemas are for the description only.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: limits.bodyBytes },
    (_req, body, done) => {
      try {
        done(null, parseJsonBody(body as Buffer, limits.jsonDepth));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof ProblemError) return sendProblem(reply, error.problem, error.headers);
    const body = problemOfFrameworkError(error as { code?: unknown; statusCode?: unknown });
    if (body.status >= 500)
      logger?.error({ reqId: request.id, err: loggableError(error) }, 'memvault serve request failed');
    return sendProblem(reply, body);
  });
  app.setNotFoundHandler((_request, reply) => sendProblem(reply, problem('not-found', 'No such resource.')));

  // Requests whose credential fails count per client address (the rate limiter below only sees callers
  // that verified): past the budget they get 429 instead of 401. A verified credential is never
  // refused for its address, so clients behind one proxy address are not shut out by another's.
  const budget = options.rateLimit === false ? undefined : (options.rateLimit ?? { max: 600, windowMs: 60_000 });
  const failures = budget && new RateWindow(budget, 'requests with a missing or bad credential from your address');
  app.addHook('onRequest', async (request) => {
    draining.enter();
    if (!request.routeOptions.config.auth) return;
    try {
      request.caller = await resolveCaller(verifiers, request);
    } catch (error) {
      if (error instanceof ProblemError && error.problem.status === 401) failures?.take(`ip:${request.ip}`, Date.now());
      throw error;
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route's template, never the URL (it can hold a file name); the caller's kind, never the user.
    logger?.info(
      {
        reqId: request.id,
        method: request.method,
        route: request.routeOptions.url ?? 'unknown',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        ...(request.caller ? { caller: request.caller.kind } : {}),
      },
      'memvault serve request',
    );
  });

  if (budget) {
    const { max, windowMs } = budget;
    await app.register(rateLimit, {
      global: false,
      hook: 'preHandler',
      max,
      timeWindow: windowMs,
      keyGenerator: (request: FastifyRequest) => request.caller?.rateKey ?? `ip:${request.ip}`,
      errorResponseBuilder: (_request, context) =>
        new ProblemError(
          'rate-limited',
          'This credential sent too many requests; retry after the Retry-After seconds.',
          {
            'retry-after': String(Math.ceil(context.ttl / 1000)),
          },
        ),
    });
  }

  const idempotency = new IdempotencyRecords(vault.store, options.idempotency);
  const readiness = new Readiness(
    () => vault.checkReady(),
    options.readyCacheMs,
    undefined,
    (error) => logger?.warn({ err: loggableError(error) }, 'memvault serve is not ready'),
  );
  const document = openApiDocument('1');
  // An erasure token's iat may be in the future by the clock skew the JWT's exp and nbf get.
  const files = fileRoutes(vault, options.auth.jwt ? checkJwtOptions(options.auth.jwt).clockSkewSeconds : undefined);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each handler types its own request
  const handlers: Record<string, (request: FastifyRequest<any>, reply: FastifyReply) => Promise<unknown>> = {
    runMemoryCommand: memoryRoute(vault, idempotency),
    listFiles: files.list,
    readFile: files.read,
    writeFile: files.write,
    deleteFile: files.remove,
    restore: files.restore,
    exportMemory: files.exportArchive,
    forgetMe: files.erase,
    health: async () => ({ status: 'ok' }),
    readiness: async (_request, reply) => {
      if (draining.closing) return sendProblem(reply, problem('shutting-down', 'The service is shutting down.'));
      await readiness.assertReady();
      return { status: 'ready' };
    },
    openapi: async () => document,
  };
  for (const route of ROUTES) {
    app.route({
      method: route.method,
      url: route.url,
      config: { auth: route.auth, ...(route.auth && options.rateLimit !== false ? { rateLimit: {} } : {}) },
      preValidation: queryIntegers(route.query ?? NO_QUERY),
      // Every route has a query schema: a parameter it does not define is a 400, never ignored.
      schema: {
        querystring: route.query ?? NO_QUERY,
        ...(route.validateBody && route.body ? { body: route.body } : {}),
      },
      handler: handlers[route.operationId]!,
    });
  }

  return {
    fastify: app,
    async listen(address = {}) {
      const host = address.host ?? DEFAULT_HOST;
      if (options.auth.development && !isLoopback(host))
        throw new RangeError('development mode (no auth) listens on a loopback address only');
      return app.listen({ host, port: address.port ?? DEFAULT_PORT });
    },
    async close() {
      draining.start();
      await app.close();
    },
  };
}
