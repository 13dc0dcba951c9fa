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
