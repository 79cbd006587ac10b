/**
 * Words that, just before a dotted number, make it a version or a numbered item ("version
 * 10.0.0.1", "Chrome 127.0.6429.130", "v1.2.3.4", "the build id was 1.0.0.1") rather than an address or a phone number.
 * Tested against the few characters before a candidate, so it is anchored at the end. The Japanese
 * word takes no word boundary (\b does not see one before katakana), so it has its own alternative,
 * with the spaces and the colon (also the full-width '：') that may follow it.
 */
export const VERSION_BEFORE =
  /(?:\b(?:v|ver|vers|version|versión|versione|versie|バージョン|release|build|rev|revision|firmware|fw|update|patch|edition|sdk|api level|os|ios|android|chrome|chromium|firefox|safari|edge|node|python|java|kernel|section|chapter|abschnitt|kapitel|§)(?:\s+(?:id|number|no\.?|was|is|string|tag|of|now|to|from))*\.?\s*[:=]?\s*|[vV]|バージョン[ \t]*[:=：]?[ \t]*)$/i;
