import { invalidInput } from '../core/errors.ts';
import { toolInputSchema } from '../engine/tool.ts';
import type { Operation } from './operation.ts';

/** `max_budget_usd` → `maxBudgetUsd`; camelCase stays as it is. */
export function snakeToCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `maxBudgetUsd` → `max_budget_usd`. */
export function camelToSnake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The operation's own alias for `name`, if it has one (never an inherited member of the alias table). */
function ownAlias(op: Operation, name: string): string | undefined {
  const aliases = op.aliases;
  return aliases !== undefined && Object.hasOwn(aliases, name) ? aliases[name] : undefined;
}

/**
 * Validates raw input for an operation: accepts snake_case or camelCase keys and the operation's aliases, then
 * parses with its zod schema. Throws invalid_input naming the field as the caller wrote it.
 */
export function parseOperationInput(op: Operation, raw: unknown): Record<string, unknown> {
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw invalidInput(`${op.name}: parameters must be an object of named values`);
  }
  // Maps and own-property lookups only: a caller's names (`constructor`, `__proto__`) never reach inherited members.
  const written = new Map<string, string>();
  const normalized = new Map<string, unknown>();
  for (const [key, value] of Object.entries((raw ?? {}) as Record<string, unknown>)) {
    let name = snakeToCamel(key);
    const alias = ownAlias(op, name) ?? ownAlias(op, key);
    if (alias !== undefined && !normalized.has(alias)) name = alias;
    if (normalized.has(name)) throw invalidInput(`${key}: given twice (as ${written.get(name)} and ${key})`, key);
    normalized.set(name, value);
    written.set(name, key);
  }
  const result = op.input.safeParse(Object.fromEntries(normalized));
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const [head, ...rest] = issue.path.map(String);
    const field = head === undefined ? '' : [written.get(head) ?? head, ...rest].join('.');
    if (issue.code === 'unrecognized_keys') {
      const known = Object.keys(op.input.shape).join(', ');
      return `unknown parameter${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => written.get(k) ?? k).join(', ')} (accepted: ${known})`;
    }
    return field ? `${field}: ${issue.message}` : issue.message;
  });
  const first = result.error.issues[0];
  const firstName = first?.code === 'unrecognized_keys' ? first.keys[0] : first?.path[0];
  const field = typeof firstName === 'string' ? (written.get(firstName) ?? firstName) : undefined;
  throw invalidInput(`${op.name}: ${issues.join('; ')}`, field);
}

/** The JSON Schema of an operation's input, with snake_case property names (the tools' naming). */
export function inputJsonSchema(op: Operation): Record<string, unknown> {
  const schema = toolInputSchema(op.input);
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = (schema.required ?? []) as string[];
  const out: Record<string, unknown> = {
    type: 'object',
    properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [camelToSnake(k), v])),
    additionalProperties: false,
  };
  if (required.length > 0) out.required = required.map(camelToSnake);
  return out;
}
