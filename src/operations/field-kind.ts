import type { z } from 'zod';

/** The kind of value an input field takes, as text surfaces (chat, CLI) need to know it. */
export type FieldKind = 'string' | 'number' | 'boolean' | 'array' | 'enum' | 'other';

interface Def {
  type: string;
  innerType?: z.ZodType;
}

const WRAPPERS = ['optional', 'default', 'nullable', 'prefault', 'readonly'];

/** `schema` and the schemas it wraps (optional, default, nullable…), outermost first. */
function layers(schema: z.ZodType): z.ZodType[] {
  const out = [schema];
  let def = (schema as unknown as { def: Def }).def;
  while (def.innerType && WRAPPERS.includes(def.type)) {
    out.push(def.innerType);
    def = (def.innerType as unknown as { def: Def }).def;
  }
  return out;
}

/** Looks through optional/default/nullable wrappers to the field's base kind. */
export function fieldKind(schema: z.ZodType): FieldKind {
  const type = (layers(schema).at(-1) as unknown as { def: Def }).def.type;
  if (['string', 'number', 'boolean', 'array', 'enum'].includes(type)) return type as FieldKind;
  return 'other';
}

/**
 * The field's description: its own, else that of the schema it wraps (`param.describe(…).optional()` keeps it on the
 * inner schema); '' when none has one.
 */
export function fieldDescription(schema: z.ZodType): string {
  return layers(schema).find((layer) => layer.description !== undefined)?.description ?? '';
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
