// ISO 4217 minor-unit exponents: how many digits an invoice's `amount` (minor units) has after the
// decimal point in major units. Source: the ISO 4217 list maintained by SIX
// (https://www.six-group.com/en/products-services/financial-information/data-standards.html).
// Only currencies listed here can be converted; an unknown code is refused rather than guessed,
// because guessing 2 for a 0- or 3-exponent currency would misprice by a factor of 100 or 10.

export const FIAT_EXPONENTS: Readonly<Record<string, number>> = {
  // Exponent 0
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0,
  UGX: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  // Exponent 3
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  // Exponent 2
  AED: 2, ARS: 2, AUD: 2, BAM: 2, BDT: 2, BGN: 2, BMD: 2, BOB: 2, BRL: 2, CAD: 2,
  CHF: 2, CNY: 2, COP: 2, CRC: 2, CZK: 2, DKK: 2, DOP: 2, DZD: 2, EGP: 2, EUR: 2,
  GBP: 2, GEL: 2, GHS: 2, GTQ: 2, HKD: 2, HUF: 2, IDR: 2, ILS: 2, INR: 2, JMD: 2,
  KES: 2, KZT: 2, LKR: 2, MAD: 2, MDL: 2, MXN: 2, MYR: 2, NGN: 2, NOK: 2, NZD: 2,
  PEN: 2, PHP: 2, PKR: 2, PLN: 2, QAR: 2, RON: 2, RSD: 2, RUB: 2, SAR: 2, SEK: 2,
  SGD: 2, THB: 2, TRY: 2, TWD: 2, UAH: 2, USD: 2, UYU: 2, UZS: 2, ZAR: 2,
};

/** The exponent of an ISO 4217 code (any case), or undefined when the currency is not listed. */
export function fiatExponent(code: string): number | undefined {
  return FIAT_EXPONENTS[code.toUpperCase()];
}

export function isFiatCurrency(code: string): boolean {
  return fiatExponent(code) !== undefined;
}
