// Loaded with `node --import`: counts every module the process loads (ESM and CommonJS), by
// package, and prints them as one JSON line on exit. Used by bench/import.ts.
import { register } from 'node:module';
import Module from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const seen = new Set();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => seen.add(url));
port1.unref();
register('./resolve-hook.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
const load = Module._load;
Module._load = function (request, parent, isMain) {
  try {
    seen.add('file://' + Module._resolveFilename(request, parent, isMain));
  } catch {
    // built-ins and failures are not files
  }
  return load.apply(this, arguments);
};
process.on('exit', () => {
  const files = [...seen].filter((u) => u.startsWith('file://'));
  const packages = new Set(files.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1]).filter(Boolean));
  process.stdout.write('\n' + JSON.stringify({ modules: files.length, packages: [...packages].sort() }) + '\n');
});
