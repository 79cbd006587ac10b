// The words before a phone number and the shapes of digit runs that are something else.

export const PHONE_CONTEXT =
  /(?:phone|\btel\b|\btel\.|\bcall|mobile|\bcell|\bfax|whatsapp|\bsms|\btext\b|\bring\b|contact|\bdial|telefon|\bhandy|rufnummer|nummer|anruf|t[ée]l[ée]phone|\bt[ée]l\b|portable|appel|num[ée]ro|tel[ée]fono|m[óo]vil|celular|llam|cellulare|電話|携帯|連絡|☎|📞)/i;

// For a national number of any region the word must say phone, not just "number" or "contact"
// ("Kundennummer 748692, Vertrag 8069-712"), and stand close before it.
export const STRONG_PHONE_CONTEXT =
  /(?:phone|\btel\b|\btel\.|mobile|\bcell|\bfax|whatsapp|telefon(?!ica)|\bhandy|t[ée]l[ée]phone|\bt[ée]l\b|portable|tel[ée]fono|m[óo]vil|celular|cellulare|電話|携帯|☎|📞)/i;

export const DATE_SHAPE = /^(?:\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./ ]\d{1,2}[-./ ]\d{2,4})$/;
// XXX-XX-XXXX is how SSNs are written; no national plan groups a phone number that way.
export const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;
/** How a ZIP+4 code is written (postal.ts says when it is one). */
export const ZIP4_SHAPE = /^\d{5}-\d{4}$/;
// "2024-03-0012", "2024-01-15 10", "15.03.2024 12": a date followed by more digits.
export const DATE_PREFIX =
  /^(?:(?:19|20)\d\d[-./](?:0?[1-9]|1[0-2])[-./]|(?:0?[1-9]|[12]\d|3[01])[-./](?:0?[1-9]|1[0-2])[-./](?:19|20)\d\d)/;
export const YEAR_RANGE = /^(?:19|20)\d\d ?[-/] ?(?:19|20)?\d\d$/;
export const CURRENCY_BEFORE = /(?:€|\$|£|¥|\beur|\busd|\bgbp|\bchf|\bjpy|\bcad|\baud)\s?$/i;
export const IDENTIFIER_BEFORE =
  /\b(?:order|ticket|invoice|ref|reference|id|no|nr|case|booking|tracking|serial|sku|part|model|item|article|isbn|issn|ean|account|acct|po|batch|lot|build|job|bestell\w*|rechnung\w*|auftrag\w*|kunden\w*|vertrag\w*|commande|facture|dossier|pedido|factura|referencia|expediente)\.?\s*(?:number|no\.?|nr\.?|n°|#|id)?\s*[:#=]?\s*$|(?:注文|番号|伝票)[:：\s]*$/i;
// A Brazilian mobile as Brazil prints it: the two-digit area code in brackets, the ninth digit 9,
// then 4-4 ("(11) 98765-4321"). No other plan writes numbers so; checked in BR even when BR is not
// among the configured regions.
export const BR_MOBILE = /^\(\d\d\) ?9\d{4}-\d{4}$/;
export const CURRENCY_AFTER = /^\s?(?:€|\$|£|¥|eur\b|usd\b|gbp\b|chf\b|jpy\b|euros?\b|dollars?\b|円|%)/i;
