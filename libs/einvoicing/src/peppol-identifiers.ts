/**
 * Peppol identifiers: the Electronic Address Scheme (EAS) codes a Peppol BIS 3 document may use
 * for an endpoint (rule PEPPOL-EN16931-CL008), and the scheme under which a VAT number is an
 * endpoint in its country.
 */

/** The EAS code list of Peppol BIS Billing 3.0 (PEPPOL-EN16931-CL008). */
export const PEPPOL_EAS_CODES: ReadonlySet<string> = new Set(
  (
    '0002 0007 0009 0037 0060 0088 0096 0097 0106 0130 0135 0142 0151 0183 0184 0188 0190 0191 ' +
    '0192 0193 0195 0196 0198 0199 0200 0201 0202 0204 0208 0209 0210 0211 0212 0213 0215 0216 ' +
    '0218 0221 0230 9901 9910 9913 9914 9915 9918 9919 9920 9922 9923 9924 9925 9926 9927 9928 ' +
    '9929 9930 9931 9932 9933 9934 9935 9936 9937 9938 9939 9940 9941 9942 9943 9944 9945 9946 ' +
    '9947 9948 9949 9950 9951 9952 9953 9957 9959'
  ).split(' '),
);

/**
 * The EAS scheme whose identifier is the full VAT number (with its country prefix), per VAT
 * prefix. Denmark's is the CVR scheme 0184, whose identifier is `DK` + the 8-digit CVR — the same
 * text as the Danish VAT number (PEPPOL-COMMON-R042). Only schemes checked against the Peppol EAS
 * list are here; parties of other countries (Sweden, Norway, Finland, …, whose Peppol identifiers
 * are not VAT numbers) need an explicit Peppol id.
 */
const VAT_ENDPOINT_SCHEMES: Readonly<Record<string, string>> = {
  AT: '9914',
  BE: '9925',
  BG: '9926',
  CH: '9927',
  CY: '9928',
  CZ: '9929',
  DE: '9930',
  DK: '0184',
  EE: '9931',
  EL: '9933',
  ES: '9920',
  FR: '9957',
  GB: '9932',
  HR: '9934',
  HU: '9910',
  IE: '9935',
  IT: '0211',
  LT: '9937',
  LU: '9938',
  LV: '9939',
  MT: '9943',
  NL: '9944',
  PL: '9945',
  PT: '9946',
  RO: '9947',
  SI: '9949',
  SK: '9950',
};

export interface PeppolEndpoint {
  scheme: string;
  id: string;
}

/** The endpoint a VAT number is under, or null where the country has no VAT-number scheme. */
export function endpointOfVatId(vatId: string): PeppolEndpoint | null {
  const scheme = VAT_ENDPOINT_SCHEMES[vatId.slice(0, 2)];
  if (!scheme) return null;
  if (scheme === '0184' && !/^DK[0-9]{8}$/.test(vatId)) return null;
  return { scheme, id: vatId };
}

/** A `scheme:identifier` Peppol participant id, or null when it is not one with a known scheme. */
export function parsePeppolId(peppolId: string): PeppolEndpoint | null {
  const match = /^([0-9]{4}):(\S{1,100})$/.exec(peppolId.trim());
  if (!match || !PEPPOL_EAS_CODES.has(match[1])) return null;
  return { scheme: match[1], id: match[2] };
}

/** EU member states by VAT prefix (Greece is EL), for the reverse-charge decision. */
export const EU_VAT_PREFIXES: ReadonlySet<string> = new Set(
  'AT BE BG CY CZ DE DK EE EL ES FI FR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' '),
);

/** EU member states by ISO 3166 country code. */
export const EU_COUNTRIES: ReadonlySet<string> = new Set(
  'AT BE BG CY CZ DE DK EE GR ES FI FR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' '),
);

/**
 * The ISO 3166-1 codes Peppol accepts as country codes (plus the VAT prefix EL for BR-CO-09),
 * checked against VAT prefixes.
 */
export function isVatPrefix(prefix: string): boolean {
  return /^[A-Z]{2}$/.test(prefix) && (prefix === 'EL' || ISO_3166.has(prefix));
}

const ISO_3166: ReadonlySet<string> = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR ' +
    'BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ ' +
    'EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW ' +
    'GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY ' +
    'KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV ' +
    'MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY ' +
    'QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG ' +
    'TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ' +
    'ZW 1A XI'
  ).split(' '),
);

/** True for a country code Peppol accepts (BR-CL-14). */
export function isPeppolCountry(code: string): boolean {
  return ISO_3166.has(code);
}
