// What an endpoint URL in the configuration must look like: every one of them is fetched over
// HTTP, so anything else (a typo in the scheme, a space, a missing host) is refused when the
// configuration loads instead of being retried forever by the first process that calls it.

/** Why `value` is not an http(s) URL with a host, or null when it is one. */
export function httpUrlProblem(value: string): string | null {
  if (/\s/.test(value)) return 'must not contain spaces or line breaks (an http:// or https:// URL)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an http:// or https:// URL, e.g. https://node.example.com/KEY';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol.slice(0, -1)} is not http or https`;
  // WHATWG parsing turns http:/host into http://host; a person meant something else.
  if (!/^https?:\/\/[^/?#]/i.test(value) || url.hostname === '') return 'needs a host after http:// or https://';
  return null;
}

/** scheme://host[:port]: how an endpoint is shown (providers put keys in paths, queries and user info). */
export function urlOrigin(value: string): string {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}`;
  } catch {
    return '(not a URL)';
  }
}

/**
 * The URL without its user info, and that user info as an HTTP Basic `Authorization` value: fetch
 * refuses a URL carrying credentials (and would print it in the error), so they travel as a header.
 */
export function withoutCredentials(value: string): { url: string; authorization: string | null } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { url: value, authorization: null };
  }
  if (!url.username && !url.password) return { url: value, authorization: null };
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.toString(), authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
}

// An http(s) or ws(s) URL inside free text (a log line, a JSON string, an error message): scheme,
// optional user info (up to the last @ before the path), authority, then the rest up to a quote or space.
const URL_IN_TEXT = /\b(https?|wss?):\/\/(?:([^\s"'<>\\/?#]*)@)?([^\s"'<>\\/?#@]*)([^\s"'<>\\]*)/gi;

/**
 * Every http(s)/ws(s) URL in `text` as scheme://host[:port]: for error text from a chain endpoint,
 * where a URL can only be the endpoint's own, keys and all (ethers and fetch quote it).
 */
export function originsOnly(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (_m, scheme: string, _userinfo: string | undefined, authority: string) => `${scheme}://${authority}`);
}

/**
 * A scrubber for text that may quote the configured endpoints (log lines, printed errors): any URL
 * with user info, and any URL at one of `endpoints`' origins, becomes scheme://host[:port]; the
 * endpoints' passwords and key-like path segments and query values are replaced wherever they
 * appear on their own.
 */
export function createUrlScrubber(endpoints: readonly string[]): (text: string) => string {
  const origins = new Set<string>();
  const secrets = new Set<string>();
  for (const e of endpoints) {
    let url: URL;
    try {
      url = new URL(e);
    } catch {
      continue;
    }
    // Only an endpoint with something to hide: its URLs elsewhere in a line are left alone otherwise.
    if (url.username || url.password || url.pathname.length > 1 || url.search) origins.add(`${url.protocol}//${url.host}`.toLowerCase());
    // A password of any real length; elsewhere only what looks like a key (short words such as
    // "v3" or "jsonrpc" would be blanked in every line).
    for (const p of [url.password, decodeURIComponent(url.password)]) if (p.length >= 4) secrets.add(p);
    const keyLike = [url.username, decodeURIComponent(url.username), ...url.pathname.split('/'), ...url.searchParams.values()];
    for (const p of keyLike) if (p.length >= 12) secrets.add(p);
  }
  const literal = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    if (out.includes('://')) {
      out = out.replace(URL_IN_TEXT, (whole, scheme: string, userinfo: string | undefined, authority: string) => {
        const origin = `${scheme}://${authority}`;
        return userinfo !== undefined || origins.has(origin.toLowerCase()) ? origin : whole;
      });
    }
    for (const s of literal) if (out.includes(s)) out = out.split(s).join('[redacted]');
    return out;
  };
}
