/**
 * What memvault calls on a logger: `(fields, message)` at four levels. pino's loggers and `console`
 * both have this shape.
 */
export interface VaultLogger {
  debug(fields: object | string, message?: string): void;
  info(fields: object | string, message?: string): void;
  warn(fields: object | string, message?: string): void;
  error(fields: object | string, message?: string): void;
}
