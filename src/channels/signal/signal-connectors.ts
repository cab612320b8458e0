// Builds the Signal connectors from `channels.signal`: one per account (`accountsOf`), each its own number on a
// signal-cli daemon (one daemon may serve several numbers in its multi-account mode).
import { join } from 'node:path';
import type { Clock } from '../../core/clock.ts';
import { accountsOf } from '../../core/config-accounts.ts';
import type { SignalChannelConfig } from '../../core/config-signal.ts';
import type { Logger } from '../../core/logger.ts';
import { SignalConnector } from './signal-connector.ts';

export interface SignalConnectorsDeps {
  clock: Clock;
  logger: Logger;
  /** The daemon's state directory: each account keeps its small state file under `<home>/signal/`. */
  home?: string;
  /** Not used (signal-cli holds the account's keys); accepted so every connector factory takes the same deps. */
  env?: NodeJS.ProcessEnv;
  /** Not used (Signal has no command menu); accepted for the same reason. */
  commands?: readonly unknown[];
}

/** One SignalConnector per configured account; call it only when `channels.signal.enabled`. */
export function createSignalConnectors(section: SignalChannelConfig, deps: SignalConnectorsDeps): SignalConnector[] {
  const stateDir = deps.home ? join(deps.home, 'signal') : null;
  return accountsOf(section).map(
    ({ account, config }) => new SignalConnector(config, account, { clock: deps.clock, logger: deps.logger, stateDir }),
  );
}
