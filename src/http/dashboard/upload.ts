import { GatewayError } from '../../domain/errors.ts';

// multipart/form-data as the upload form sends it (a file and a few text fields): every part
// becomes a field, a file part its content as UTF-8 text (signed files are JSON). The size limit is
// the content-type parser's; a body that is not well-formed multipart is a coded 400.

function bad(why: string): GatewayError {
  return new GatewayError('VALIDATION_ERROR', `The upload is not a well-formed multipart form (${why})`);
}

export function boundaryOf(contentType: string): string {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const b = m?.[1] ?? m?.[2];
  if (!b || b.length > 200) throw bad('no boundary');
  return b;
}

/** A parsed form: repeated names become lists. */
export type Body = Record<string, string | string[]>;

export function parseMultipart(body: Buffer, boundary: string): Body {
  const out: Body = {};
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  if (at < 0) throw bad('no part');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === '--') return out;
    if (body.subarray(at, at + 2).toString() !== '\r\n') throw bad('a boundary not followed by a line break');
    const headEnd = body.indexOf('\r\n\r\n', at + 2);
    if (headEnd < 0) throw bad('a part without headers');
    const head = body.subarray(at + 2, headEnd).toString('utf8');
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), headEnd + 4);
    if (next < 0) throw bad('no closing boundary');
    const name = /content-disposition:[^\r\n]*;\s*name="([^"]*)"/i.exec(head)?.[1];
    if (name === undefined) throw bad('a part without a name');
    const value = body.subarray(headEnd + 4, next).toString('utf8');
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    at = next + 2;
  }
}
