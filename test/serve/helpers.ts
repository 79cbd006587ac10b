import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload, type CryptoKey } from 'jose';
import { createServer, newApiKey, type MemvaultServer, type ServeOptions } from '../../src/serve.js';
import type { Vault } from '../../src/memvault.js';
import { fileURLToPath } from 'node:url';
import { cliEnv } from '../cli/helpers.js';
import { memoryVault } from '../kit/vault.js';

export const ISSUER = 'https://idp.test/';
export const AUDIENCE = 'memvault-test';

/** An identity provider's signing key and its JWKS, served over real HTTP on a free loopback port. */
export interface TestIdp {
  jwksUrl: string;
  publicJwk: JWK;
  privateKey: CryptoKey;
  sign(
    payload: JWTPayload,
    options?: { kid?: string; expiresIn?: string | number; alg?: string; key?: CryptoKey | Uint8Array },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startIdp(): Promise<TestIdp> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const server: Server = createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
    publicJwk,
    privateKey,
    async sign(payload, options = {}) {
      const jwt = new SignJWT(payload)
        .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? 'k1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt();
      if (options.expiresIn !== undefined) jwt.setExpirationTime(options.expiresIn);
      else jwt.setExpirationTime('5m');
      return jwt.sign(options.key ?? privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export const serviceKey = newApiKey('billing-agent');
export const keyWithoutActAs = newApiKey('reporting', []);

/** A server over a memory-store vault with both credential kinds. */
export async function testServer(
  idp: TestIdp,
  extra: Partial<ServeOptions> = {},
  vault?: Vault,
): Promise<{ server: MemvaultServer; vault: Vault }> {
  const v = vault ?? (await memoryVault()).vault;
  const server = await createServer(v, {
    auth: {
      jwt: { jwksUrl: idp.jwksUrl, issuer: ISSUER, audience: AUDIENCE },
      apiKeys: [serviceKey.entry, keyWithoutActAs.entry],
    },
    ...extra,
  });
  return { server, vault: v };
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  exit: Promise<number | null>;
}

/**
 * A `memvault serve` process of the built CLI (test/setup/built.ts), in one process: a SIGKILL of
 * the tsx wrapper would leave its node child serving after the suite. Resolves once it listens.
 */
export function startServeProcess(args: string[], env: Record<string, string>): Promise<ServeProcess> {
  const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
  const child = spawn(process.execPath, [main, 'serve', '--port', '0', ...args], { env: cliEnv(env) });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ child, url: match[1]!, exit });
    });
    void exit.then((code) => reject(new Error(`memvault serve exited ${code}: ${err}`)));
  });
}
