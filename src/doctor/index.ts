/**
 * `memvault doctor`: checks a deployment's storage, keys and lifecycle against what memvault needs
 * (an S3 bucket: s3.ts; the embedded file store: file-store.ts; the SQLite store: sqlite.ts) and
 * reports each check (checks.ts).
 */
export { doctorFailed, formatDoctor, type CheckStatus, type DoctorCheck } from './checks.js';
export { KEY_RECORD_NONCURRENT_DAYS, runDoctor, type DoctorOptions } from './s3.js';
export { runFileStoreDoctor, type FileStoreDoctorOptions } from './file-store.js';
export { runSqliteDoctor, type SqliteDoctorOptions } from './sqlite.js';
