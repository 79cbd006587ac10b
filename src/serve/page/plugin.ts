/**
 * The memory page (docs/page.md): a person signs in with the host's OpenID provider and sees,
 * corrects, downloads and erases what agents remember about them. A Fastify plugin on the service's
 * instance: its routes live under one prefix, take the user only from the sealed session the login
 * made, answer server-written HTML under a script-free CSP, and refuse every state-changing request
 * that lacks the strict cookie, the same-origin Origin header and the session's CSRF token.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VaultLogger } from '../../entry/logger.js';
import { loggableError } from '../../errors.js';
import type { Vault } from '../../memvault.js';
import { ProblemError } from '../problems.js';
import { layout, PAGE_HEADERS, type Safe } from './html.js';
import { oidcLogin, type OidcOptions } from './oidc.js';
import { pageActions } from './actions.js';
import { signedOutScreen, messageScreen } from './screens.js';
import {
  CookieSealer,
  csrfMatches,
  DEFAULT_TIMEOUTS,
  isLoginState,
  LOGIN_STATE_MS,
  newSession,
  openSession,
  RevokedSessions,
  type PageSession,
  type SessionTimeouts,
} from './session.js';
import { PAGE_CSS } from './style.js';
import { FORM_TYPE, formOf, parseForm, type Form } from './form.js';
import { SessionEnds } from './session-ends.js';
import { DEFAULT_PAGE_RATE_LIMITS, RateWindow, type PageRateLimits } from './rate.js';

export interface PageOptions {
  oidc: OidcOptions;
  /** The URL people reach the service at (https, or http on loopback); the callback is `<publicUrl><prefix>/callback`. */
  publicUrl: string;
  /** At least 32 random bytes; sessions survive a restart and are shared by instances with the same secret. */
  sessionSecret: Uint8Array;
  timeouts?: Partial<SessionTimeouts>;
  /** Where the page lives (default `/page`). */
  prefix?: string;
  /** Bytes of a form body at most (default 2 MiB: a file's text, escaped). */
  maxFormBytes?: number;
  /** Where failures of the page are logged (the error, never a user, path or content). */
  logger?: VaultLogger;
  /** Rate limits per session and, for signing in, per client address (defaults: 300 and 20 a minute). */
  rateLimits?: Partial<PageRateLimits>;
  /** How long an instance trusts what it read of a person's ended sessions (default 5 s). */
  sessionEndsCacheMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

export const SESSION_COOKIE = 'mv_session';
/** The same session under SameSite=Strict: only it authorises a change. */
export const WRITE_COOKIE = 'mv_session_w';
export const LOGIN_COOKIE = 'mv_login';
/** Audit records of the page's lifecycle operations name this actor (never the person's id). */
export const PAGE_ACTOR = 'page:person';

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

export function cookiesOf(request: FastifyRequest): Map<string, string> {
  const jar = new Map<string, string>();
  const header = request.headers.cookie;
  if (typeof header !== 'string' || header.length > 16_384) return jar;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    // A name sent twice is ambiguous (a cookie planted by a sibling domain): neither counts.
    if (jar.has(name)) jar.set(name, '');
    else jar.set(name, part.slice(eq + 1).trim());
  }
  return jar;
}

export async function registerPage(app: FastifyInstance, vault: Vault, options: PageOptions): Promise<void> {
  const publicUrl = new URL(options.publicUrl);
  const secure = publicUrl.protocol === 'https:';
  if (!secure && !(publicUrl.protocol === 'http:' && isLoopbackHost(publicUrl.hostname)))
    throw new RangeError('the public URL must be https (plain http only on a loopback address)');
  const prefix = options.prefix ?? '/page';
  const origin = publicUrl.origin;
  const redirectUri = `${origin}${prefix}/callback`;
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const now = options.now ?? Date.now;
  const sealer = new CookieSealer(options.sessionSecret);
  const revoked = new RevokedSessions(timeouts);
  const ends = new SessionEnds(vault, options.sessionEndsCacheMs);
  const login = await oidcLogin(options.oidc);
  const maxFormBytes = options.maxFormBytes ?? 2 * 1024 * 1024;
  const flags = `HttpOnly; Path=${prefix}${secure ? '; Secure' : ''}`;
  const limits = { ...DEFAULT_PAGE_RATE_LIMITS, ...options.rateLimits };
  const perSession = new RateWindow(limits.session, 'requests from this session');
  const perAddress = new RateWindow(limits.login, 'sign-in attempts from your network');

  function sessionCookies(session: PageSession): string[] {
    const sealed = sealer.seal('session', session);
    const maxAge = Math.ceil(timeouts.absoluteMs / 1000);
    return [
      `${SESSION_COOKIE}=${sealed}; ${flags}; SameSite=Lax; Max-Age=${maxAge}`,
      `${WRITE_COOKIE}=${sealed}; ${flags}; SameSite=Strict; Max-Age=${maxAge}`,
    ];
  }
  const cleared = [SESSION_COOKIE, WRITE_COOKIE, LOGIN_COOKIE].map((n) => `${n}=; ${flags}; SameSite=Lax; Max-Age=0`);

  function send(reply: FastifyReply, status: number, title: string, body: Safe, session?: PageSession) {
    return reply
      .code(status)
      .headers(PAGE_HEADERS)
      .type('text/html; charset=utf-8')
      .send(layout(title, body, prefix, session ? { csrf: session.csrf } : undefined));
  }

  /** The session of a read: the Lax cookie (a link from elsewhere opens the page signed in). */
  async function readSession(request: FastifyRequest, reply: FastifyReply): Promise<PageSession | undefined> {
    const session = openSession(sealer, cookiesOf(request).get(SESSION_COOKIE), timeouts, now());
    if (!session || revoked.has(session)) return undefined;
    // Counted before the store is asked whether the session was ended elsewhere.
    perSession.take(RevokedSessions.idOf(session), now());
    if (await ends.ended(session.user, session.created, now())) return undefined;
    const renewed = { ...session, seen: now() };
    void reply.header('set-cookie', sessionCookies(renewed));
    return renewed;
  }

  /** The session of a change: strict cookie, same-origin Origin and the session's CSRF token, or a 403. */
  async function writeSession(request: FastifyRequest, reply: FastifyReply, form: Form): Promise<PageSession> {
    if (request.headers.origin !== origin)
      throw new ProblemError('forbidden', 'This change did not come from this page; open the page and try again.');
    const session = openSession(sealer, cookiesOf(request).get(WRITE_COOKIE), timeouts, now());
    if (!session || revoked.has(session))
      throw new ProblemError('unauthorized', 'Your session has ended; sign in again.');
    if (!csrfMatches(session, form['csrf']))
      throw new ProblemError('forbidden', 'This form is out of date; open the page and try again.');
    perSession.take(RevokedSessions.idOf(session), now());
    if (await ends.ended(session.user, session.created, now()))
      throw new ProblemError('unauthorized', 'Your session has ended; sign in again.');
    const renewed = { ...session, seen: now() };
    void reply.header('set-cookie', sessionCookies(renewed));
    return renewed;
  }

  await app.register(
    async (scope) => {
      // The page's forms only: the service's JSON parser is not inherited, so a JSON body (fields of
      // any type, behind the person's CSRF token) is a 415 before any action reads it.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser(FORM_TYPE, { parseAs: 'string', bodyLimit: maxFormBytes }, (_request, body, done) => {
        try {
          done(null, parseForm(body as string));
        } catch (error) {
          done(error as Error, undefined);
        }
      });
      scope.setErrorHandler((error, request, reply) => {
        const code = (error as { statusCode?: number }).statusCode;
        const finalStatus =
          error instanceof ProblemError ? error.problem.status : code && code >= 400 && code < 500 ? code : 500;
        const detail =
          error instanceof ProblemError
            ? error.problem.detail
            : code === 413
              ? 'The form is too large.'
              : code === 415
                ? `This page takes only its own forms (${FORM_TYPE}); nothing was changed.`
                : finalStatus < 500
                  ? 'The request was not understood; nothing was changed.'
                  : 'Something went wrong; nothing was changed by this request.';
        if (error instanceof ProblemError) void reply.headers(error.headers);
        if (finalStatus >= 500)
          options.logger?.error({ reqId: request.id, err: loggableError(error) }, 'memvault page request failed');
        return send(
          reply,
          finalStatus,
          finalStatus === 429 ? 'Too many requests' : 'Not done',
          messageScreen(detail, prefix),
        );
      });
      scope.setNotFoundHandler((_request, reply) =>
        send(reply, 404, 'Not found', messageScreen('No such page.', prefix)),
      );

      scope.get('/page.css', async (_request, reply) =>
        reply
          .headers({ 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' })
          .type('text/css')
          .send(PAGE_CSS),
      );

      scope.get('/login', async (request, reply) => {
        perAddress.take(request.ip, now());
        const { url, state } = await login.start(redirectUri, now());
        const sealed = sealer.seal('login', state);
        return reply
          .headers(PAGE_HEADERS)
          .header('set-cookie', `${LOGIN_COOKIE}=${sealed}; ${flags}; SameSite=Lax; Max-Age=${LOGIN_STATE_MS / 1000}`)
          .redirect(url, 303);
      });

      scope.get('/callback', async (request, reply) => {
        perAddress.take(request.ip, now());
        const state = sealer.open('login', cookiesOf(request).get(LOGIN_COOKIE));
        if (!isLoginState(state) || now() - state.created > LOGIN_STATE_MS)
          throw new ProblemError('unauthorized', 'The sign-in took too long or was not started here; sign in again.');
        const user = await login.finish(new URL(request.url, origin), state);
        await ends.signedIn(user, now());
        return reply
          .headers(PAGE_HEADERS)
          .header('set-cookie', [...cleared.slice(2), ...sessionCookies(newSession(user, now()))])
          .redirect(prefix, 303);
      });

      scope.post('/logout', async (request, reply) => {
        const session = await writeSession(request, reply, formOf(request));
        revoked.revoke(session, now());
        await ends.endAll(session.user, now());
        void reply.removeHeader('set-cookie');
        void reply.header('set-cookie', cleared);
        return send(reply, 200, 'Signed out', signedOutScreen(prefix));
      });

      pageActions(scope, vault, {
        prefix,
        actor: PAGE_ACTOR,
        now,
        readSession,
        writeSession,
        send,
        signedOut: (reply) => send(reply, 200, 'Your memory', signedOutScreen(prefix)),
        endSession: async (reply, session, everywhere = true) => {
          revoked.revoke(session, now());
          if (everywhere) await ends.endAll(session.user, now());
          void reply.removeHeader('set-cookie');
          void reply.header('set-cookie', cleared);
        },
      });
    },
    { prefix },
  );
}
