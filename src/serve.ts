/**
 * memvault/serve: the memory tool over HTTP (`memvault serve` runs it). createServer(vault, options)
 * answers a Fastify-based server whose callers are identified by their credential only: a user's
 * bearer JWT (its sub) or a service API key with the act-as scope (the user in Memvault-User).
 * Loaded only through this entry: the root entry never loads Fastify or jose.
 */
export { createServer, DEFAULT_HOST, DEFAULT_PORT, isLoopback } from './serve/app.js';
export type { MemvaultServer, ServeAuthOptions, ServeOptions } from './serve/app.js';
export { ALLOWED_JWT_ALGORITHMS } from './serve/jwt.js';
export type { JwtOptions } from './serve/jwt.js';
export { API_KEY_PREFIX, newApiKey, parseApiKeys } from './serve/api-keys.js';
export type { ApiKeyEntry, ApiKeyScope } from './serve/api-keys.js';
export type { Caller, CallerKind, CredentialRequest, CredentialVerifier } from './serve/identity.js';
export { USER_HEADER } from './serve/identity.js';
export type { ServeLimits } from './serve/limits.js';
export { openApiDocument } from './serve/openapi.js';
export { registerPage } from './serve/page/plugin.js';
export type { PageOptions } from './serve/page/plugin.js';
export { PROBLEMS, problemType } from './serve/problems.js';
export type { Problem, ProblemName } from './serve/problems.js';
