/**
 * A ZIP+4 code's surroundings: the number `XXXXX-XXXX` after a US state code ("CA 94107-1234",
 * "Springfield, IL 62704-1234") or a postal word ("ZIP: 10001-0001", "Zip code 30301-0002") is a
 * postal code. Shared by the SSN detector (Presidio's XXXXX-XXXX form) and
 * the phone detector (a 9-digit national number in some regions), which would each claim it.
 */
const STATE_BEFORE =
  /\b(?:A[LKZRSPE]|C[AOT]|D[EC]|F[LM]|G[AU]|HI|I[DLNA]|K[SY]|LA|M[EDAINSOTHP]|N[EVHJMYCD]|O[HKR]|P[AWR]|RI|S[CD]|T[NX]|UT|V[TAI]|W[AVIY])\.?,?[ \t]+$/;
const POSTAL_BEFORE =
  /(?:\bzip|\bpostal|\bpost[ -]?code|\bpostleitzahl|\bplz|\bcode postal|\bc[óo]digo postal|\bc\.?p\.?|\bmail(?:ing)? to|\baddress|\bsuite|\bste\.?|\bapt\.?|\bbox)(?![a-z])[^\n\d]{0,16}$/i;

export function isPostalCode(text: string, start: number): boolean {
  const before = text.slice(Math.max(0, start - 40), start);
  return STATE_BEFORE.test(before) || POSTAL_BEFORE.test(before);
}
