import { checkCredentials } from '../coding/credentials.ts';
import type { Config } from '../core/config.ts';
import { HARNESS_NAMES } from '../core/config.ts';
import type { Check } from './doctor.ts';

/**
 * One check per harness: are its credentials in its environment (the daemon's, with harnesses.<name>.env over it) or
 * in its CLI's login file? Missing ones say where to put them: a failure for the default harness, a warning otherwise.
 */
export function credentialChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  return HARNESS_NAMES.map((name): Check => {
    const agentEnv = { ...env, ...config.harnesses[name].env };
    const providerKey = name === 'codex' ? config.harnesses.codex.provider?.envKey : undefined;
    const status = checkCredentials(name, agentEnv, providerKey ? { codexProviderEnvKey: providerKey } : {});
    const label = `Credentials ${name}`;
    if (status.found) {
      const where =
        status.source.kind === 'env' ? `${status.source.variable} is set` : `logged in (${status.source.path})`;
      return { status: 'ok', label, detail: where };
    }
    return { status: name === config.defaultHarness ? 'fail' : 'warn', label, detail: `missing: ${status.hint}` };
  });
}
