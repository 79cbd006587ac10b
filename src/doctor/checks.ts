/** What doctor reports: one check per thing memvault needs, and how the report is read and printed. */
export type CheckStatus = 'ok' | 'missing' | 'unknown' | 'warn';

export interface DoctorCheck {
  id: string;
  title: string;
  status: CheckStatus;
  /** Missing required checks make doctor exit 1. */
  required: boolean;
  detail: string;
  /** How to fix it: the CDK construct or prop, and the aws CLI command. */
  fix?: string;
}

/** Fail closed: a required check that is missing, or that could not be made, fails doctor. */
export function doctorFailed(checks: DoctorCheck[]): boolean {
  return checks.some((c) => c.required && (c.status === 'missing' || c.status === 'unknown'));
}

export function formatDoctor(checks: DoctorCheck[]): string {
  const mark: Record<CheckStatus, string> = { ok: 'ok     ', missing: 'MISSING', unknown: 'unknown', warn: 'warn   ' };
  const lines: string[] = [];
  const shown = new Set<string>();
  for (const c of checks) {
    lines.push(`[${mark[c.status]}] ${c.title}: ${c.detail}${c.required || c.status === 'ok' ? '' : ' (recommended)'}`);
    if (!c.fix || c.status === 'ok') continue;
    // The lifecycle fix is one command for every rule: print it once.
    if (shown.has(c.fix)) lines.push('          fix: the lifecycle configuration above');
    else for (const line of c.fix.split('\n')) lines.push(`          fix: ${line}`);
    shown.add(c.fix);
  }
  const missing = checks.filter((c) => c.required && c.status === 'missing').length;
  const unchecked = checks.filter((c) => c.required && c.status === 'unknown').length;
  const causes = [
    ...new Set(
      checks.filter((c) => c.required && c.status === 'unknown').map((c) => c.detail.replace(/^could not check: /, '')),
    ),
  ];
  if (missing === 0 && unchecked === 0) lines.push('memvault doctor: every required check passed');
  else {
    const parts = [
      missing > 0 ? `${missing} required item(s) missing` : '',
      unchecked > 0
        ? `${unchecked} required check(s) could not be made (${causes.slice(0, 3).join('; ')}${causes.length > 3 ? '; ...' : ''})`
        : '',
    ].filter(Boolean);
    lines.push(`memvault doctor: FAILED: ${parts.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}
