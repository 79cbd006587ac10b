/**
 * The variables' table of docs/configuration.md, rendered from config/env.ts (the doc's test keeps
 * the two the same: `npx tsx -e "import('./src/config/doc.ts').then((m) => console.log(m.renderEnvTable()))"`).
 */
import { ENV_VARIABLES, type EnvScope } from './env.js';

const SCOPES: ReadonlyArray<[EnvScope, string]> = [
  ['vault', 'Read by `fromEnv()` (and so by every CLI command that opens a vault)'],
  ['sweeper', 'The sweeper: `memvault expire` and the Lambda'],
  ['lambda', 'The sweeper Lambda alone'],
  ['cli', 'The CLI alone'],
];

export function renderEnvTable(): string {
  const parts: string[] = [];
  for (const [scope, title] of SCOPES) {
    parts.push(`### ${title}`, '', '| Variable | Sets | Meaning |', '| --- | --- | --- |');
    for (const variable of ENV_VARIABLES.filter((v) => v.scope === scope)) {
      parts.push(`| \`${variable.name}\` | \`${variable.setting}\` | ${variable.doc.replace(/\|/g, '\\|')} |`);
    }
    parts.push('');
  }
  return parts.join('\n').trimEnd();
}
