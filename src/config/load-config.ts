import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { configSchema, type Config } from './schema.ts';
import { BaseError } from '../domain/errors.ts';
import { urlOrigin } from '../domain/http-url.ts';

export const DEFAULT_CONFIG_PATH = fileURLToPath(new URL('../../config/default.yaml', import.meta.url));

/** Environment variables and the config key each one sets. */
export const ENV_KEYS: Record<string, string> = {
  CHAINGATE_DATABASE_URL: 'database.url',
  CHAINGATE_HOST: 'server.host',
  CHAINGATE_PORT: 'server.port',
  CHAINGATE_MASTER_KEY: 'security.masterKey',
  CHAINGATE_LOG_LEVEL: 'log.level',
  CHAINGATE_LOG_FORMAT: 'log.format',
  CHAINGATE_METRICS_PORT: 'metrics.port',
  CHAINGATE_INDEXER_METRICS_PORT: 'metrics.indexerPort',
};

export class ConfigError extends BaseError {
  override readonly name = 'ConfigError';
}

type Tree = Record<string, unknown>;

function isTree(v: unknown): v is Tree {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Objects merge key by key; arrays and scalars replace. */
export function deepMerge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') continue;
    const prev = out[k];
    out[k] = isTree(prev) && isTree(v) ? deepMerge(prev, v) : v;
  }
  return out;
}

function readLayer(path: string): Tree {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`config error: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { uniqueKeys: true });
  } catch (err) {
    const line = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ConfigError(`config error: ${path} is not valid YAML or JSON: ${line}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isTree(parsed)) throw new ConfigError(`config error: ${path} must hold a mapping of keys at the top level`);
  return parsed;
}

function hasPath(tree: Tree, path: readonly PropertyKey[]): boolean {
  let node: unknown = tree;
  for (const key of path) {
    if (!isTree(node) || !(String(key) in node)) return false;
    node = node[String(key)];
  }
  return true;
}

function valueAt(tree: Tree, path: readonly PropertyKey[]): unknown {
  let node: unknown = tree;
  for (const key of path) node = isTree(node) ? node[String(key)] : undefined;
  return node;
}

function setPath(tree: Tree, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let node = tree;
  for (const key of keys.slice(0, -1)) {
    if (!isTree(node[key])) node[key] = {};
    node = node[key] as Tree;
  }
  node[keys.at(-1)!] = value;
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra layer over the file and under the environment (used by tests). */
  overrides?: Tree;
}

export interface LoadedConfig {
  config: Config;
  /** Where the operator file came from, if any. */
  file: string | null;
}

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const defaults = readLayer(DEFAULT_CONFIG_PATH);
  const file = env.CHAINGATE_CONFIG?.trim() || null;
  const fileLayer = file ? readLayer(file) : {};
  const envLayer: Tree = {};
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== '') setPath(envLayer, key, value);
  }
  const merged = deepMerge(deepMerge(deepMerge(defaults, fileLayer), options.overrides ?? {}), envLayer);

  const result = configSchema.safeParse(merged);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new ConfigError(describeIssue(issue, merged, { defaults, file, fileLayer, envLayer, overrides: options.overrides }));
  }
  return { config: result.data, file };
}

function describeIssue(
  issue: z.core.$ZodIssue,
  merged: Tree,
  layers: { defaults: Tree; file: string | null; fileLayer: Tree; envLayer: Tree; overrides: Tree | undefined },
): string {
  const path = issue.path;
  let key = path.map(String).join('.') || '(top level)';
  if (issue.code === 'unrecognized_keys') key = [...path.map(String), issue.keys[0]].join('.');
  const envName = Object.entries(ENV_KEYS).find(([, k]) => k === key)?.[0];
  let source: string;
  if (envName && hasPath(layers.envLayer, path)) source = `environment variable ${envName}`;
  else if (layers.overrides && hasPath(layers.overrides, path)) source = 'command-line overrides';
  else if (layers.file && hasPath(layers.fileLayer, issue.code === 'unrecognized_keys' ? key.split('.') : path)) source = layers.file;
  else source = DEFAULT_CONFIG_PATH;
  const problem = issue.code === 'unrecognized_keys' ? 'unknown key' : issue.message;
  const value = valueAt(merged, path);
  const shown = issue.code === 'unrecognized_keys' || value === undefined ? '' : ` (got ${redactedJson(key, value)})`;
  return `config error: ${key}: ${problem}${shown} — from ${source}`;
}

function redactedJson(key: string, value: unknown): string {
  if (/masterKey|secret|password/i.test(key)) return '"[redacted]"';
  // An endpoint is shown as scheme://host[:port]: keys live in paths, queries and user info.
  if (/Url$/.test(key) && typeof value === 'string' && !/\s/.test(value) && URL.canParse(value) && !key.startsWith('database')) {
    const url = new URL(value);
    if (url.host) return JSON.stringify(`${url.protocol}//${url.host}${url.pathname.length > 1 || url.search ? '/…' : ''}`);
  }
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/** The effective config for printing: secrets and database passwords replaced, endpoints as scheme://host[:port]. */
export function redactConfig(config: Config): Config {
  const copy = structuredClone(config);
  if (copy.security.masterKey) copy.security.masterKey = '[redacted]';
  copy.database.url = copy.database.url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1[redacted]@');
  for (const chain of Object.values(copy.chains)) {
    for (const network of [chain.mainnet, chain.testnet]) if (network?.apiKey) network.apiKey = '[redacted]';
  }
  eachEndpoint(copy as unknown as Tree, (tree, key, url) => {
    tree[key] = urlOrigin(url);
  });
  return copy;
}

/**
 * Every endpoint URL of the config (`*Url` keys holding an http(s) URL, the database's aside): the
 * URLs the logs scrub, since providers put keys in their user info, paths and queries.
 */
export function endpointUrls(config: Config): string[] {
  const urls: string[] = [];
  eachEndpoint(config as unknown as Tree, (_tree, _key, url) => urls.push(url));
  return urls;
}

function eachEndpoint(tree: Tree, visit: (tree: Tree, key: string, url: string) => void): void {
  for (const [key, value] of Object.entries(tree)) {
    if (key === 'database') continue;
    if (isTree(value)) eachEndpoint(value, visit);
    else if (typeof value === 'string' && /Url$/.test(key) && /^https?:\/\//i.test(value)) visit(tree, key, value);
  }
}
