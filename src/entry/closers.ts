/**
 * The one list of things to close, for whatever opens several resources in a row (createVault, the
 * CLI's store + encryption): each is added as soon as it is open; `closeAll` closes them in reverse
 * order, every one even when an earlier close throws (the first error is thrown after the rest).
 * `opening` runs the opening steps and, when one fails part way, closes what was opened before it
 * and rethrows the failure: no nested cleanup blocks.
 */
export class Closers {
  private readonly closers: Array<() => Promise<void> | void> = [];
  private closed: Promise<void> | undefined;

  /** Registers `close` and hands `resource` back, so that opening and registering is one expression. */
  add<T>(resource: T, close: (resource: T) => Promise<void> | void): T {
    this.closers.push(() => close(resource));
    return resource;
  }

  /** Closes everything added, last first, once (a second call waits for the first). */
  closeAll(): Promise<void> {
    this.closed ??= (async () => {
      let failure: { error: unknown } | undefined;
      for (const close of this.closers.splice(0).reverse()) {
        try {
          await close();
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    })();
    return this.closed;
  }

  /** Runs the opening steps; a failure closes what they opened (reverse order) and is rethrown as it was. */
  async opening<T>(open: (closers: this) => Promise<T>): Promise<T> {
    try {
      return await open(this);
    } catch (error) {
      // The opening failure is what the caller needs to hear; a close failing after it is secondary.
      await this.closeAll().catch(() => undefined);
      throw error;
    }
  }
}
