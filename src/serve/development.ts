/**
 * Development mode (`--no-auth`): no credential at all, the user named in Memvault-User. Only for a
 * server on a loopback address (createServer's listen refuses any other), and announced on every start.
 */
import { namedUser, rateKeyOf, type Caller, type CredentialVerifier } from './identity.js';

export function developmentVerifier(): CredentialVerifier {
  return {
    kind: 'development',
    recognises: () => true,
    async verify(request): Promise<Caller> {
      const userId = namedUser(request);
      return { kind: 'development', userId, actor: 'development', rateKey: rateKeyOf('dev', userId) };
    },
  };
}
