/** What the page's route groups share: the prefix, the actor, the clock, sessions and the layout. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Form } from './form.js';
import type { Safe } from './html.js';
import type { PageSession } from './session.js';

export interface PageContext {
  prefix: string;
  actor: string;
  now: () => number;
  readSession: (request: FastifyRequest, reply: FastifyReply) => Promise<PageSession | undefined>;
  writeSession: (request: FastifyRequest, reply: FastifyReply, form: Form) => Promise<PageSession>;
  send: (reply: FastifyReply, status: number, title: string, body: Safe, session?: PageSession) => FastifyReply;
  signedOut: (reply: FastifyReply) => FastifyReply;
  /** Ends the session here and, through the store, on every instance. */
  /**
   * Ends the session; `everywhere` (logout) also every session the person signed in before, on every
   * instance. Forget-me ends this one only: the record that ends the others would give the erased
   * person a new key.
   */
  endSession: (reply: FastifyReply, session: PageSession, everywhere?: boolean) => Promise<void>;
}
