// Compares real answers with the response schemas of a served OpenAPI document: field names
// (no undocumented field, every required one present), nesting, JSON types, enums and constants.
// A small walker over the subset of JSON Schema the generated documents use ($ref, allOf, anyOf,
// type, properties, required, additionalProperties, items, enum, const).

export interface OpenApiDoc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
}

export interface Schema {
  $ref?: string;
  allOf?: Schema[];
  anyOf?: Schema[];
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
}

function resolve(doc: OpenApiDoc, schema: Schema): Schema {
  let s = schema;
  for (let hops = 0; s.$ref && hops < 20; hops++) {
    const name = s.$ref.replace('#/components/schemas/', '');
    const target = doc.components.schemas[name];
    if (!target) throw new Error(`unresolvable $ref ${s.$ref}`);
    s = target;
  }
  return s;
}

/** The schema of `data` in the success answer of an operation (allOf [SuccessEnvelope, {data}]). */
export function successDataSchema(doc: OpenApiDoc, path: string, method: string, status: number): Schema {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not in the document`);
  const schema = op.responses[String(status)]?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} documents no ${status} answer`);
  for (const part of schema.allOf ?? [schema]) {
    const data = resolve(doc, part).properties?.data;
    if (data && (data.$ref || data.type || data.anyOf)) return data;
  }
  throw new Error(`${method} ${path} ${status}: no schema for data`);
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeAllows(type: string | string[] | undefined, actual: string): boolean {
  if (type === undefined) return true;
  const types = [type].flat();
  return types.includes(actual) || (actual === 'integer' && types.includes('number'));
}

/** Every difference between `value` and `schema`, as "data.payment.status: …" lines; empty when it conforms. */
export function shapeMismatches(doc: OpenApiDoc, schema: Schema, value: unknown, at = 'data'): string[] {
  const s = resolve(doc, schema);
  if (s.allOf) return s.allOf.flatMap((part) => shapeMismatches(doc, part, value, at));
  if (s.anyOf) {
    const results = s.anyOf.map((option) => shapeMismatches(doc, option, value, at));
    return results.some((r) => r.length === 0) ? [] : results.sort((a, b) => a.length - b.length)[0]!;
  }
  const actual = jsonType(value);
  if (!typeAllows(s.type, actual)) return [`${at}: ${actual} where the document says ${JSON.stringify(s.type)}`];
  if (s.const !== undefined && value !== s.const) return [`${at}: ${JSON.stringify(value)} is not the documented constant ${JSON.stringify(s.const)}`];
  if (s.enum && !s.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}`];
  const out: string[] = [];
  if (actual === 'array' && s.items) for (const [i, v] of (value as unknown[]).entries()) out.push(...shapeMismatches(doc, s.items!, v, `${at}[${i}]`));
  if (actual === 'object' && s.properties) {
    const obj = value as Record<string, unknown>;
    for (const key of s.required ?? []) if (!(key in obj)) out.push(`${at}.${key}: required by the document, missing in the answer`);
    for (const [key, v] of Object.entries(obj)) {
      const prop = s.properties[key];
      if (prop) out.push(...shapeMismatches(doc, prop, v, `${at}.${key}`));
      else if (s.additionalProperties === false) out.push(`${at}.${key}: in the answer, not in the document`);
    }
  }
  return out;
}

/** The field names of an object schema (for messages and coverage checks). */
export function documentedKeys(doc: OpenApiDoc, schema: Schema): string[] {
  return Object.keys(resolve(doc, schema).properties ?? {});
}
