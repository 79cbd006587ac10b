import cliProgress from 'cli-progress';

export interface Progress {
  start(total: number): void;
  update(done: number, total?: number): void;
  stop(): void;
}

/** A progress bar on stderr when it is a terminal (never in pipes, cron or CI logs). */
export function progressBar(label: string, enabled = process.stderr.isTTY === true): Progress {
  if (!enabled) return { start: () => {}, update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {percentage}% | {value}/{total}`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    start: (total) => {
      bar.start(total, 0);
      started = true;
    },
    update: (done, total) => {
      if (!started) {
        bar.start(total ?? done, 0);
        started = true;
      }
      if (total !== undefined) bar.setTotal(total);
      bar.update(done);
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}
