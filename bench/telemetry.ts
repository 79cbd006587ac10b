/**
 * What telemetry costs per command, in one run:
 *   npx tsx bench/telemetry.ts [commands-per-round] [rounds]
 * The same command mix (create, view file, str_replace, view dir) runs on an in-memory store with
 * no provider registered, and with the SDK's in-memory exporters (metrics and traces, each alone and
 * both); rounds alternate between the setups so that drift hits all of them alike. A second table
 * times the instrumentation primitives with no provider against a plain call, times the number of
 * spans a command makes: the no-provider overhead per command, against no instrumentation at all.
 */
import { metrics, trace } from '@opentelemetry/api';
import { createVault, type Vault } from '../src/index.js';
import { activeTracer } from '../src/telemetry/tracing.js';
import { instruments } from '../src/telemetry/metrics.js';
import { registerInMemoryTelemetry, type InMemoryTelemetry } from '../test/telemetry/harness.js';
import { median, printTable } from './stats.js';

const perRound = Number(process.argv[2] ?? 100);
const rounds = Number(process.argv[3] ?? 21);

type Setup = 'no provider' | 'metrics + traces' | 'metrics only' | 'traces only';
const SETUPS: Setup[] = ['no provider', 'metrics + traces', 'metrics only', 'traces only'];

let telemetry: InMemoryTelemetry | undefined;
async function use(setup: Setup): Promise<void> {
  if (telemetry) await telemetry.shutdown();
  telemetry = undefined;
  if (setup === 'no provider') return;
  telemetry = registerInMemoryTelemetry();
  if (setup === 'metrics only') trace.disable();
  if (setup === 'traces only') metrics.disable();
}

async function mix(vault: Vault, n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i += 4) {
    // Eight files reused round after round: every command costs the same in every round.
    const path = `/memories/bench/f${i % 8}.md`;
    await vault.run('bench-user', { command: 'create', path, file_text: 'alpha beta\ngamma\n' });
    await vault.run('bench-user', { command: 'view', path });
    await vault.run('bench-user', { command: 'str_replace', path, old_str: 'gamma', new_str: 'delta' });
    await vault.run('bench-user', { command: 'view', path: '/memories/bench' });
  }
  return ((performance.now() - t0) * 1000) / n;
}

async function commandCosts(): Promise<Map<Setup, number[]>> {
  const vault = await createVault({ store: 'memory:', encryption: false });
  const out = new Map<Setup, number[]>(SETUPS.map((s) => [s, []]));
  for (const setup of SETUPS) {
    await use(setup);
    await mix(vault, 200); // warm-up
  }
  for (let r = 0; r < rounds; r++) {
    for (const setup of SETUPS) {
      await use(setup);
      out.get(setup)!.push(await mix(vault, perRound));
      telemetry?.resetSpans();
    }
  }
  await use('no provider');
  await vault.close();
  return out;
}

async function spansPerCommand(): Promise<number> {
  const vault = await createVault({ store: 'memory:', encryption: false });
  await use('metrics + traces');
  await mix(vault, 4);
  const count = telemetry!.spans().length / 4;
  await use('no provider');
  await vault.close();
  return count;
}

/** Nanoseconds per call of the no-provider checks every instrumented step makes, against an empty loop. */
function primitiveNs(): { empty: number; tracer: number; meter: number } {
  const n = 2_000_000;
  const time = (fn: () => unknown) => {
    const samples: number[] = [];
    let sink = 0;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) if (fn() !== undefined) sink++;
      samples.push(((performance.now() - t0) * 1e6) / n);
    }
    if (sink < 0) console.log(sink);
    return median(samples);
  };
  const empty = time(() => undefined);
  return { empty, tracer: time(activeTracer) - empty, meter: time(instruments) - empty };
}

const costs = await commandCosts();
const base = median(costs.get('no provider')!);
console.log(
  `\nPer command (median of ${rounds} rounds of ${perRound} commands: create, view, str_replace, view dir; memory store, no encryption)\n`,
);
printTable(
  ['setup', 'µs / command', 'vs no provider'],
  SETUPS.map((s) => {
    const m = median(costs.get(s)!);
    return [s, m, `${(m / base).toFixed(2)}x`];
  }),
);

const spans = await spansPerCommand();
const p = primitiveNs();
// With no provider each instrumented step (one per span it would make) checks the tracer and the meter once.
const overheadUs = ((p.tracer + p.meter) * spans) / 1000;
console.log(
  `\nNo provider: the checks each instrumented step makes (${spans.toFixed(1)} steps per command of the mix), against no instrumentation\n`,
);
printTable(
  ['check', 'ns / call', 'µs / command'],
  [
    ['activeTracer() (none registered)', p.tracer, (p.tracer * spans) / 1000],
    ['instruments() (none registered)', p.meter, (p.meter * spans) / 1000],
    ['total', p.tracer + p.meter, overheadUs],
  ],
);
console.log(
  `\nNo-provider overhead per command: ~${overheadUs.toFixed(2)} µs of ${base.toFixed(1)} µs (${((overheadUs / base) * 100).toFixed(2)} %)`,
);
