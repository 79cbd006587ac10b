import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import type { Vault } from '../../memvault.js';
import type * as ServeEntry from '../../serve.js';
import type { ServeAuthOptions } from '../../serve.js';
import type { CredentialVerifier } from '../../serve/identity.js';
import { cliLogger } from '../config.js';
import { exitWithError, usageError } from '../errors.js';
import { openCliVault, type VaultFlags } from '../vault.js';

/**
 * The serve entry (Fastify, jose and the routes), loaded by the action only: every other command of
 * the CLI starts without it.
 */
type ServeModule = typeof ServeEntry;
const loadServe = (): Promise<ServeModule> => import('../../serve.js');

interface ServeFlags extends VaultFlags {
  /** Absent: the service's default (DEFAULT_HOST, loopback). */
  host?: string;
  /** Absent: the service's default (DEFAULT_PORT). */
  port?: number;
  jwksUrl?: string;
  issuer?: string;
  audience?: string;
  jwtAlgorithms?: string;
  apiKeys?: string;
  auth: boolean;
  rateLimit: number;
  newApiKey?: string;
  oidcIssuer?: string;
  oidcClientId?: string;
  oidcClientSecretFile?: string;
  oidcUserClaim?: string;
  publicUrl?: string;
  pageSecretFile?: string;
}

/** The memory page's settings (docs/page.md), or undefined without --oidc-issuer. */
function pageFromFlags(flags: ServeFlags): Parameters<ServeModule['registerPage']>[2] | undefined {
  if (flags.oidcIssuer === undefined) return undefined;
  if (!flags.oidcClientId || !flags.publicUrl)
    throw usageError('--oidc-issuer needs --oidc-client-id and --public-url');
  const read = (file: string, flag: string) => {
    try {
      return readFileSync(file);
    } catch {
      throw usageError(`${flag}: the file cannot be read`);
    }
  };
  const secret = flags.pageSecretFile ? read(flags.pageSecretFile, '--page-secret-file') : randomBytes(32);
  if (secret.byteLength < 32) throw usageError('--page-secret-file: the secret must be at least 32 bytes');
  const clientSecret = flags.oidcClientSecretFile
    ? read(flags.oidcClientSecretFile, '--oidc-client-secret-file').toString('utf8').trim()
    : undefined;
  return {
    oidc: {
      issuer: flags.oidcIssuer,
      clientId: flags.oidcClientId,
      ...(clientSecret ? { clientSecret } : {}),
      ...(flags.oidcUserClaim ? { userClaim: flags.oidcUserClaim } : {}),
    },
    publicUrl: flags.publicUrl,
    sessionSecret: secret,
  };
}

/** `--new-api-key ID`: a new key (shown once) and the entry for the keys file, as JSON; nothing is served. */
function printNewApiKey(id: string, serve: ServeModule): void {
  let made;
  try {
    made = serve.newApiKey(id);
  } catch {
    throw usageError('--new-api-key: the key id must match [a-z0-9-]{1,64}');
  }
  process.stdout.write(`${JSON.stringify({ key: made.key, entry: made.entry }, null, 2)}\n`);
}

function port(value: string): number {
  const n = Number(value);
  if (!/^\d{1,5}$/.test(value) || n > 65535) throw new InvalidArgumentError('a port is 0 to 65535');
  return n;
}

function positive(value: string): number {
  const n = Number(value);
  if (!/^\d{1,9}$/.test(value) || n < 1) throw new InvalidArgumentError('a positive whole number');
  return n;
}

/** The API's one verifier when only the memory page is configured: it recognises no request. */
const NO_AGENT_CREDENTIALS: CredentialVerifier = {
  kind: 'none',
  recognises: () => false,
  verify: () => Promise.reject(new Error('no agent credential is configured')),
};

/** The credentials the flags configure; none at all is refused unless --no-auth on loopback. */
export function authFromFlags(flags: ServeFlags & { host: string }, serve: ServeModule): ServeAuthOptions {
  const jwtFlags = [flags.jwksUrl, flags.issuer, flags.audience];
  if (jwtFlags.some((f) => f !== undefined) && jwtFlags.some((f) => f === undefined))
    throw usageError('--jwks-url, --issuer and --audience go together');
  const auth: ServeAuthOptions = {};
  if (flags.jwksUrl && flags.issuer && flags.audience) {
    auth.jwt = {
      jwksUrl: flags.jwksUrl,
      issuer: flags.issuer,
      audience: flags.audience,
      ...(flags.jwtAlgorithms ? { algorithms: flags.jwtAlgorithms.split(',').map((a) => a.trim()) } : {}),
    };
  }
  if (flags.apiKeys !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.apiKeys, 'utf8');
    } catch {
      throw usageError('--api-keys: the keys file cannot be read');
    }
    try {
      auth.apiKeys = serve.parseApiKeys(JSON.parse(text));
    } catch (error) {
      throw usageError(`--api-keys: ${error instanceof RangeError ? error.message : 'the keys file is not JSON'}`);
    }
  }
  if (!flags.auth) {
    if (auth.jwt || auth.apiKeys) throw usageError('--no-auth cannot be combined with --jwks-url or --api-keys');
    if (!serve.isLoopback(flags.host))
      throw usageError('--no-auth listens on a loopback address only (--host 127.0.0.1)');
    auth.development = true;
  } else if (!auth.jwt && !auth.apiKeys) {
    if (flags.oidcIssuer === undefined)
      throw usageError(
        'no authentication configured: give --jwks-url/--issuer/--audience, --api-keys FILE, --oidc-issuer (the memory page), or --no-auth on loopback',
      );
    // OpenID alone: people sign in to the memory page (its own session and CSRF checks); the API
    // has no credential kind for agents, so every call to it is 401.
    auth.verifiers = [NO_AGENT_CREDENTIALS];
  }
  return auth;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the memory tool over HTTP (POST /v1/memory), identity from each request’s credential')
    .option(
      '--store <url>',
      'sqlite:/abs/file.db, file:///abs/dir, s3://bucket/prefix (env MEMVAULT_STORE; default ./.memvault.db)',
    )
    .option('--audit-file <path>', 'write audit records as JSON lines to this file (env MEMVAULT_AUDIT_FILE)')
    .option(
      '--audit-checkpoints <path>',
      'append the audit chain head to this file (env MEMVAULT_AUDIT_CHECKPOINT_FILE)',
    )
    .option('--host <address>', 'address to listen on (default: 127.0.0.1)')
    .option('--port <n>', 'port to listen on (0: any free port; default: 8787)', port)
    .option('--jwks-url <url>', "users' bearer JWTs: the identity provider's JWKS URL")
    .option('--issuer <iss>', "users' bearer JWTs: the required issuer")
    .option('--audience <aud>', "users' bearer JWTs: the required audience")
    .option('--jwt-algorithms <list>', 'comma-separated allow-list of JWT algorithms (default: RS*, PS*, ES*, EdDSA)')
    .option('--api-keys <file>', 'service API keys: JSON {"keys":[{"id","sha256","scopes":["act-as"]}]}')
    .option('--no-auth', 'no credentials (local development, loopback only; warned on every start)')
    .option('--rate-limit <n>', 'requests per credential per minute', positive, 600)
    .option('--oidc-issuer <url>', 'the memory page (docs/page.md): the OpenID provider people sign in with')
    .option('--oidc-client-id <id>', 'the memory page: its client id at the provider')
    .option(
      '--oidc-client-secret-file <path>',
      'the memory page: a file holding the client secret (confidential client)',
    )
    .option('--oidc-user-claim <claim>', 'the memory page: the ID-token claim that is the user id (default: sub)')
    .option('--public-url <url>', 'the memory page: the URL people reach the service at (https, or http on loopback)')
    .option('--page-secret-file <path>', 'the memory page: 32+ random bytes sealing sessions (default: new per start)')
    .option('--new-api-key <id>', 'print a new service API key and its keys-file entry (with act-as), then exit')
    .action(async (flags: ServeFlags) => {
      const serve = await loadServe();
      const { closeOnSignals } = await import('../../serve/shutdown.js');
      const host = flags.host ?? serve.DEFAULT_HOST;
      const listenPort = flags.port ?? serve.DEFAULT_PORT;
      if (flags.newApiKey !== undefined) {
        try {
          printNewApiKey(flags.newApiKey, serve);
        } catch (error) {
          exitWithError(error);
        }
        return;
      }
      let vault: Vault;
      let auth: ServeAuthOptions;
      let page: ReturnType<typeof pageFromFlags>;
      try {
        auth = authFromFlags({ ...flags, host }, serve);
        page = pageFromFlags(flags);
        vault = await openCliVault(flags);
      } catch (error) {
        exitWithError(error);
      }
      const logger = cliLogger();
      try {
        const server = await serve.createServer(vault, {
          auth,
          logger,
          rateLimit: { max: flags.rateLimit, windowMs: 60_000 },
        });
        if (auth.development)
          process.stderr.write(
            'memvault serve: WARNING: --no-auth: anyone who can connect acts as any user they name\n',
          );
        if (page) await serve.registerPage(server.fastify, vault, { ...page, logger });
        const url = await server.listen({ host, port: listenPort });
        process.stdout.write(`memvault serve listening on ${url}\n`);
        await new Promise<void>((resolve, reject) => {
          closeOnSignals(
            () => server.close(),
            (error) => (error ? reject(error instanceof Error ? error : new Error('close failed')) : resolve()),
          );
        });
      } catch (error) {
        await vault.close().catch(() => undefined);
        exitWithError(error);
      }
      await vault.close();
    });
}
