import { detectCards } from './detectors/card.js';
import { detectEmails } from './detectors/email.js';
import { detectIbans } from './detectors/iban.js';
import { detectIps } from './detectors/ip.js';
import { DEFAULT_PHONE_REGIONS, detectPhones } from './detectors/phone.js';
import { detectSecrets } from './detectors/secret.js';
import { detectSsns } from './detectors/ssn.js';
import { normalizedView } from './normalize.js';
import { PII_TYPES } from './types.js';
import type {
  Candidate,
  Detector,
  DetectorConfig,
  PiiFinding,
  PiiPolicy,
  PiiType,
  RedactOptions,
  RedactResult,
  ScanResult,
} from './types.js';

// Order matters: the phone detector runs last and skips digits that a more specific detector has
// already claimed, which saves most libphonenumber parses in PII-dense text.
const DETECTORS: readonly Detector[] = [
  detectSecrets,
  detectIbans,
  detectCards,
  detectEmails,
  detectSsns,
  detectIps,
  detectPhones,
];

/** Every candidate of every detector, overlaps not yet settled. Exposed for tests and the bench. */
export function detectAll(text: string, options?: RedactOptions): Candidate[] {
  const config: DetectorConfig = {
    phoneRegions: options?.phoneRegions ?? DEFAULT_PHONE_REGIONS,
    allIps: options?.ipAddresses === 'all',
  };
  const out: Candidate[] = [];
  for (const detect of DETECTORS) detect(text, config, out);
  return out;
}

/**
 * Settles overlaps deterministically: candidates are grouped into clusters of transitively
 * overlapping spans; within a cluster the most specific detector wins, then the longest span, then
 * the earliest. Clustering keeps this near-linear even with many findings.
 */
export function resolveOverlaps(candidates: Candidate[]): PiiFinding[] {
  const sorted = [...candidates].sort((a, b) => a.start - b.start || b.end - a.end);
  const result: PiiFinding[] = [];
  let i = 0;
  while (i < sorted.length) {
    const first = sorted[i] as Candidate;
    let clusterEnd = first.end;
    let j = i + 1;
    while (j < sorted.length && (sorted[j] as Candidate).start < clusterEnd) {
      clusterEnd = Math.max(clusterEnd, (sorted[j] as Candidate).end);
      j++;
    }
    if (j === i + 1) {
      result.push({ type: first.type, start: first.start, end: first.end });
    } else {
      const cluster = sorted
        .slice(i, j)
        .sort((a, b) => b.priority - a.priority || b.end - b.start - (a.end - a.start) || a.start - b.start);
      const chosen: Candidate[] = [];
      for (const c of cluster) {
        if (chosen.every((k) => c.end <= k.start || c.start >= k.end)) chosen.push(c);
      }
      chosen.sort((a, b) => a.start - b.start);
      for (const c of chosen) result.push({ type: c.type, start: c.start, end: c.end });
    }
    i = j;
  }
  return result;
}

function policyFor(options: RedactOptions | undefined, type: PiiType): PiiPolicy {
  return options?.policy?.[type] ?? 'redact';
}

function compact(value: string): string {
  return value.toLowerCase().replace(/[\s\-().\u00a0]/g, '');
}

function buildAllowSet(allowList: readonly string[] | undefined): Set<string> | undefined {
  if (allowList === undefined || allowList.length === 0) return undefined;
  const set = new Set<string>();
  for (const raw of allowList) {
    const value = normalizedView(raw).text;
    set.add(value.trim().toLowerCase());
    set.add(compact(value));
  }
  return set;
}

/**
 * Finds sensitive data in `text` and reports which types the policy refuses. Findings of types
 * whose policy is `allow`, and values on the allow-list, are left out. Detectors read the folded
 * view of the text (normalize.ts: no-break spaces, dashes, full-width forms, invisible characters);
 * offsets are the input's.
 */
export function scan(text: string, options?: RedactOptions): ScanResult {
  const allow = buildAllowSet(options?.allowList);
  const findings: PiiFinding[] = [];
  const rejectedSet = new Set<PiiType>();
  const view = normalizedView(text);
  for (const f of resolveOverlaps(detectAll(view.text, options))) {
    const policy = policyFor(options, f.type);
    if (policy === 'allow') continue;
    if (allow !== undefined) {
      const value = view.text.slice(f.start, f.end);
      if (allow.has(value.toLowerCase()) || allow.has(compact(value))) continue;
    }
    const { start, end } = view.spanToOriginal(f.start, f.end);
    findings.push({ type: f.type, start, end });
    if (policy === 'reject') rejectedSet.add(f.type);
  }
  return { findings, rejected: PII_TYPES.filter((t) => rejectedSet.has(t)) };
}

export function placeholder(type: PiiType): string {
  return `[REDACTED:${type}]`;
}

/**
 * Replaces every finding with `[REDACTED:TYPE]`. Types under `reject` are replaced too: `redact`
 * cannot refuse, so it errs on the side of removing them (use `scan` to decide on a refusal).
 * Offsets in `findings` refer to the input text.
 */
export function redact(text: string, options?: RedactOptions): RedactResult {
  const { findings } = scan(text, options);
  if (findings.length === 0) return { text, findings };
  let outText = '';
  let last = 0;
  for (const f of findings) {
    outText += text.slice(last, f.start) + placeholder(f.type);
    last = f.end;
  }
  outText += text.slice(last);
  return { text: outText, findings };
}

/** Counts by type, for audit records and metrics. */
export function countByType(findings: readonly PiiFinding[]): Partial<Record<PiiType, number>> {
  const counts: Partial<Record<PiiType, number>> = {};
  for (const f of findings) counts[f.type] = (counts[f.type] ?? 0) + 1;
  return counts;
}
