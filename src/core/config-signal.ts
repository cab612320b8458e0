// Config section of the Signal connector (`channels.signal`), through signal-cli's JSON-RPC daemon
// (`signal-cli daemon --http <host:port>`): sends with its JSON-RPC `send`, receives from its event stream.
import { z } from 'zod';
import { channelWithAccounts } from './config-accounts.ts';

const positiveMs = z.number().int().positive();

/** `channels.signal`: one number, or several under `accounts`. */
export const signalChannelSchema = channelWithAccounts({
  /** Where `signal-cli daemon --http` listens (e.g. http://127.0.0.1:8080). */
  url: z.url().default('http://127.0.0.1:8080'),
  /** The Signal number signal-cli is registered with (+15551234567). */
  account: z.string().min(1).optional(),
  /** Numbers allowed to talk to switchboard; everyone else is refused. */
  allowedNumbers: z.array(z.string().min(1)).default([]),
  /** One JSON-RPC call (send, sendTyping) that takes longer than this is abandoned and counts as failed. */
  requestTimeoutMs: positiveMs.default(30_000),
  /** The event stream is dropped and opened again after this long without a byte (signal-cli sends one every 15 s). */
  streamIdleTimeoutMs: positiveMs.default(60_000),
  /** First wait after the event stream dropped or an inbound hand-off failed; doubles up to `retryMaxDelayMs`. */
  retryBaseDelayMs: positiveMs.default(1_000),
  /** Longest wait between reconnects of the event stream or retries of an inbound hand-off. */
  retryMaxDelayMs: positiveMs.default(60_000),
  /** Attempts at handing one inbound message to the engine before the sender is told it could not be accepted. */
  inboundMaxAttempts: z.number().int().positive().default(5),
});

export type SignalChannelConfig = z.infer<typeof signalChannelSchema>;

/** One Signal account's settings (the section without `enabled` and `accounts`, as `accountsOf` gives them). */
export type SignalAccountConfig = Omit<SignalChannelConfig, 'accounts'>;
