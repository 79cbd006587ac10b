// The stand-in moved to test/kit (the framework tests share it); this path stays for its importers.
export * from '../kit/fake-messages-api.js';
