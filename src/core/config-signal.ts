// Config section of the Signal connector (`channels.signal`), through signal-cli's JSON-RPC daemon.
import { z } from 'zod';
import { channelWithAccounts } from './config-accounts.ts';

/** `channels.signal`: one number, or several under `accounts`. */
export const signalChannelSchema = channelWithAccounts({
  /** Where `signal-cli daemon --http` listens (e.g. http://127.0.0.1:8080). */
  url: z.url().default('http://127.0.0.1:8080'),
  /** The Signal number signal-cli is registered with (+15551234567). */
  account: z.string().min(1).optional(),
  /** Numbers allowed to talk to switchboard; everyone else is refused. */
  allowedNumbers: z.array(z.string().min(1)).default([]),
});

export type SignalChannelConfig = z.infer<typeof signalChannelSchema>;
