import { existsSync, readFileSync } from 'node:fs';
import type { z } from 'zod';
import { writePrivateFile } from '../private-file';
import { formatPath, jsonShapeError } from './json-shape';

export type ConfigResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/**
 * Reads and validates a JSON config file. Every problem comes back as one line
 * that names the file, the field and what is wrong — never a stack trace.
 * A missing file is the empty config (embedded defaults).
 */
export function loadConfigFile<S extends z.ZodType>(file: string, schema: S): ConfigResult<z.output<S>> {
  let text: string;
  try {
    text = existsSync(file) ? readFileSync(file, 'utf8') : '{}';
  } catch (error) {
    return { ok: false, error: `${file}: cannot be read (${(error as Error).message})` };
  }
  return parseConfigText(text, schema, file);
}

export function parseConfigText<S extends z.ZodType>(text: string, schema: S, file = 'config.json'): ConfigResult<z.output<S>> {
  let raw: unknown;
  try {
    raw = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `${file}: not valid JSON (${jsonErrorWhere(text, error)})` };
  }
  return parseConfigValue(raw, schema, file);
}

/** Validates an already parsed value (from the API): its shape first (prototype keys, depth), then the schema. */
export function parseConfigValue<S extends z.ZodType>(raw: unknown, schema: S, file = 'config.json'): ConfigResult<z.output<S>> {
  const shape = jsonShapeError(raw);
  if (shape) return { ok: false, error: `${file}: ${shape}` };
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: `${file}: ${describeIssues(parsed.error.issues)}` };
  return { ok: true, value: parsed.data };
}

/** `agent.model: expected a string` — the first issues, each with its path. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${formatPath(issue.path.map((part) => (typeof part === 'number' ? part : String(part))))}: ${issue.message}`)
    .join('; ');
}

function jsonErrorWhere(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const position = /position (\d+)/.exec(message);
  const atEnd = /end of JSON input/.test(message);
  if (!position && !atEnd) return message;
  const offset = position ? Number(position[1]) : text.trimEnd().length;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `${message.replace(/ in JSON at position \d+.*$/, '')} at line ${line}, column ${column}`;
}

/** Writes the config atomically and durably, readable by the user only. */
export function writeConfigFile(file: string, value: unknown): void {
  writePrivateFile(file, JSON.stringify(value, null, 2) + '\n');
}
