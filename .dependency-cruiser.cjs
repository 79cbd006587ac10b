// The layer order of src/, written down once (docs/architecture.md explains it). A module may import
// its own layer and any layer BELOW it in this list, never one above: no upward imports, and so no
// cycle between folders. Inside one layer, files must not form a cycle either (no-circular).
// Type-only imports count too: a type that points upward couples the layers all the same.
//
// Run by `npm run lint` (scripts/depcruise.mjs; dependency-cruiser needs Node >= 22).
const LAYERS = [
  // Entry points: the CLI, then the library roots and the Lambda handler.
  { name: 'cli', path: '^src/cli/' },
  // The HTTP service (memvault serve): over the vault's entry, under the CLI that starts it.
  { name: 'serve', path: '^src/serve(/|\\.ts$)' },
  // Framework adapters (memvault/ai-sdk, memvault/langchain): a Vault as each framework's memory tool.
  { name: 'frameworks', path: '^src/(frameworks/|(ai-sdk|langchain)\\.ts$)' },
  { name: 'entry', path: '^src/(memvault|index|s3|chain|verify|pii)\\.ts$|^src/(entry|lambda)/' },
  // Lifecycle operations (erasure, export, rotation, re-key, expiry sweeps, history, restore): the
  // Vault's methods call them; they use the layers below (vault, crypto, store, audit, expiry).
  { name: 'lifecycle', path: '^src/lifecycle/' },
  // Operator checks of a deployment (storage, keys, lifecycle): doctor.
  { name: 'doctor', path: '^src/doctor/' },
  // The chain: middlewares and compose (the audit logger and its command records live here).
  { name: 'pipeline', path: '^src/pipeline/' },
  // Services beside the chain that read users' files: idle expiry, the sweeper.
  { name: 'expiry', path: '^src/expiry/' },
  // The audit log: records, writer, chains, verification, export (names commands by tool/types.ts).
  { name: 'audit', path: '^src/audit/' },
  // The protocol: the six commands, their texts (messages.ts) and types.
  { name: 'tool', path: '^src/tool/' },
  // The directory protocols the delete and rename commands call: fences, rename journals, their
  // heartbeat, resuming stopped renames (src/vault/tree/; the texts come down from the command).
  { name: 'tree', path: '^src/vault/tree/' },
  // One user's files: paths, names, locks, the user-files port over a store and a codec (its layers in src/vault/files/).
  { name: 'vault', path: '^src/vault/(?!tree/)' },
  // Keys and formats: codecs, key providers, the deployment record.
  { name: 'crypto', path: '^src/crypto/' },
  // The object-store port and its adapters (memory, file, s3), request accounting.
  { name: 'store', path: '^src/store/' },
  // Leaves that any layer may use: PII detection, telemetry hooks.
  { name: 'pii', path: '^src/pii/' },
  { name: 'telemetry', path: '^src/telemetry/' },
  // The one table of environment variables and its readers (fromEnv): parsing only, no feature code.
  { name: 'config', path: '^src/config/' },
  // The bottom: typed errors and shared primitives.
  { name: 'base', path: '^src/(errors\\.ts$|util/)' },
];

const upward = LAYERS.flatMap((layer, i) => {
  const above = LAYERS.slice(0, i).map((l) => l.path);
  if (above.length === 0) return [];
  return [
    {
      name: `layer-${layer.name}`,
      comment: `${layer.name} may import only its own layer and those below it (see LAYERS in .dependency-cruiser.cjs)`,
      severity: 'error',
      from: { path: layer.path },
      to: { path: above.join('|') },
    },
  ];
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles between files',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unlayered',
      comment: 'Every module under src/ belongs to a layer in LAYERS; add a new folder there',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map((l) => l.path).join('|') },
      to: {},
    },
    ...upward,
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
  },
};
