import type { z } from 'zod';

/** The kind of value an input field takes, as text surfaces (chat, CLI) need to know it. */
export type FieldKind = 'string' | 'number' | 'boolean' | 'array' | 'enum' | 'other';

interface Def {
  type: string;
  innerType?: z.ZodType;
}

/** Looks through optional/default/nullable wrappers to the field's base kind. */
export function fieldKind(schema: z.ZodType): FieldKind {
  let def = (schema as unknown as { def: Def }).def;
  while (def.innerType && ['optional', 'default', 'nullable', 'prefault', 'readonly'].includes(def.type)) {
    def = (def.innerType as unknown as { def: Def }).def;
  }
  if (['string', 'number', 'boolean', 'array', 'enum'].includes(def.type)) return def.type as FieldKind;
  return 'other';
}

/** Converts a text value to what a field of this kind expects (numbers, comma lists); leaves anything odd for zod to reject. */
export function coerceText(kind: FieldKind, value: string): unknown {
  if (kind === 'number' && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  if (kind === 'boolean')
    return /^(true|yes|1|on)$/i.test(value) ? true : /^(false|no|0|off)$/i.test(value) ? false : value;
  if (kind === 'array')
    return value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
  return value;
}

/** `maxBudgetUsd` → `max-budget-usd`. */
export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
