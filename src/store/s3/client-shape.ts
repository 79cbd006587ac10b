/**
 * How the public option types name an S3 client and its config: by shape, not by the types of
 * @aws-sdk/client-s3. That package is an optional peer; a declaration of the package root that
 * imported its types would fail to compile for a consumer without it (TS2307 with skipLibCheck off).
 * The adapter checks the shape at run time (settings.ts) and uses the SDK's own types inside.
 */

/** An S3Client of @aws-sdk/client-s3 v3 (any copy): it sends every request, with its credentials and middleware. */
export interface S3ClientLike {
  send(command: never, ...rest: never[]): Promise<unknown>;
  readonly middlewareStack: { add(...args: never[]): unknown };
  readonly config: object;
}

/**
 * An S3ClientConfig of @aws-sdk/client-s3 v3 (`region`, `endpoint`, `forcePathStyle`, `credentials`,
 * ...), passed to the client memvault makes. Typed loosely here for the reason above.
 */
export type S3ClientConfigLike = object;
