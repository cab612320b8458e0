// Several accounts per chat channel: a channel section's own fields are its one (default) account, or
// `accounts: { <name>: { … } }` names several, each taking the section's fields as defaults for what it leaves out.
import { z } from 'zod';

/** Account names as they appear in channel strings (`slack|work|C123`). */
const accountName = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'an account name: letters, digits, "-" or "_"');

/**
 * The section schema of a channel with accounts: `fields` (each optional in an account entry) plus `enabled` and
 * `accounts`. Pass the channel's fields without `enabled`.
 */
export function channelWithAccounts<F extends Record<string, z.ZodType>>(fields: F) {
  const account = z.strictObject(fields);
  // In an account entry a field left out takes the section's value, not the field's default: defaults are dropped.
  const withoutDefaults = (field: z.ZodType): z.ZodType =>
    field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field;
  const entry = z.strictObject(
    Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, withoutDefaults(field).optional()])),
  ) as unknown as ReturnType<typeof account.partial>;
  return account.extend({
    enabled: z.boolean().default(false),
    accounts: z.record(accountName, entry).default({}),
  });
}

/** One configured account of a channel: its name (absent for the default one) and its settings. */
export interface ChannelAccount<T> {
  account?: string;
  config: T;
}

/**
 * The accounts of a channel section: one per `accounts` entry (the section's fields as defaults), or the section
 * itself as the default account when it names none.
 */
export function accountsOf<T extends { accounts: Record<string, Partial<Omit<T, 'accounts' | 'enabled'>>> }>(
  section: T,
): ChannelAccount<Omit<T, 'accounts'>>[] {
  const { accounts, ...base } = section;
  const names = Object.keys(accounts);
  if (names.length === 0) return [{ config: base }];
  return names.map((name) => {
    const own = Object.fromEntries(Object.entries(accounts[name] ?? {}).filter(([, v]) => v !== undefined));
    return { account: name, config: { ...base, ...own } };
  });
}

/**
 * The config key of a channel account's settings, as errors and refusals name it: `channels.<channel>` for the default
 * account, `channels.<channel>.accounts.<account>` for a named one; with `field`, that setting's key under it.
 */
export function accountKey(channel: string, account: string | undefined, field?: string): string {
  const base = account === undefined ? `channels.${channel}` : `channels.${channel}.accounts.${account}`;
  return field === undefined ? base : `${base}.${field}`;
}
