/**
 * RFC 3339 date-times, strictly: `2026-03-07T12:00:00Z` or `2026-03-07T12:00:00.5+01:00`, with a
 * timezone (Z or an offset), a date that exists (no 31 April, 29 February only in leap years) and a
 * time of day that exists. Anything else (`"1"`, `"March 7"`, a date without a time or a time
 * without a zone, a leap second JavaScript cannot represent) is no date: an argument that picks the
 * state a restore goes back to is never guessed.
 */
const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** The instant a strict RFC 3339 date-time names, or undefined when the text is not one. */
export function parseRfc3339(text: unknown): Date | undefined {
  if (typeof text !== 'string') return undefined;
  const m = RFC_3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8] === undefined) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const ms = m[7] === undefined ? 0 : Math.floor(Number(`0${m[7]}`) * 1000);
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps the years 0 to 99 to 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offsetMinutes, second, ms);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
