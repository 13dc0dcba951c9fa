// A tagged template for the dashboard's HTML: every interpolated value is escaped unless it is
// markup made by this same tag (or `raw`, for the QR code's SVG made by the qrcode package).
// Merchant- and buyer-supplied strings can therefore only ever land as text.

const RAW = Symbol('raw html');

export interface Html {
  readonly [RAW]: string;
}

export function raw(markup: string): Html {
  return { [RAW]: markup };
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function piece(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map(piece).join('');
  if (typeof v === 'object' && RAW in (v as object)) return (v as Html)[RAW];
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + strings[i + 1]!;
  return raw(out);
}

export function htmlText(h: Html): string {
  return h[RAW];
}

/** An href that can only be http(s) or a path: a `javascript:` URL becomes inert text. */
export function safeHref(url: string): string {
  return /^(https?:\/\/|\/(?!\/))/i.test(url) ? url : '#';
}
