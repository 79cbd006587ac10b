/**
 * Host paths in mutation reports (Node 20 safe: no fs, so the vitest suite can test it).
 */

/**
 * Stryker writes host paths into its report: `projectRoot` (the checkout's absolute path) and, in
 * the reasons of mutants that broke the test run, the sandbox copy's paths
 * (`/home/x/repo/.stryker-tmp/sandbox-AbC123/test/a.test.ts: ...`). A committed report names files
 * relative to the checkout only. Stryker's incremental mode reads `files` and `testFiles`, never
 * `projectRoot`; the sources recorded there are left byte for byte (they decide staleness).
 */
const SANDBOX_PATH = /(?:\/[^\s"'`:]+)?\/\.stryker-tmp\/sandbox-[A-Za-z0-9_-]+\//g;
/** An absolute path below a usual home, build or temporary directory, in text meant for reading. */
const HOST_PATH =
  /(?:^|[\s:("'`=])\/(?:home|Users|root|tmp|work|var|private|mnt|opt|srv|builds?|runner|github)\/[^\s"'`]+/;

function readableFieldsOf(report) {
  const fields = [];
  for (const entry of Object.values(report.files ?? {})) {
    for (const mutant of entry.mutants ?? [])
      for (const key of ['statusReason', 'description'])
        if (typeof mutant[key] === 'string') fields.push([mutant, key]);
  }
  return fields;
}

/** The report without host paths: no projectRoot, sandbox and checkout paths in reasons made relative. */
export function withoutHostPaths(report, root = process.cwd()) {
  const { projectRoot, ...rest } = report;
  const roots = [...new Set([projectRoot, root].filter((r) => typeof r === 'string' && r.length > 1))];
  for (const [mutant, key] of readableFieldsOf(rest)) {
    let text = mutant[key].replace(SANDBOX_PATH, '');
    for (const r of roots) text = text.split(`${r.replace(/\/$/, '')}/`).join('');
    mutant[key] = text;
  }
  return rest;
}

/** Where a report still names a host path (mutation:check fails on any). */
export function hostPathsIn(report) {
  const found = [];
  if ('projectRoot' in report) found.push('projectRoot');
  for (const [mutant, key] of readableFieldsOf(report)) {
    if (HOST_PATH.test(mutant[key]) || mutant[key].includes('.stryker-tmp/sandbox-'))
      found.push(`mutant ${mutant.id} ${key}`);
  }
  return found;
}
