import type { ServiceSpec } from './service-spec.ts';

/** The unit's name under ~/.config/systemd/user. */
export const SYSTEMD_UNIT = 'switchboard.service';

/** Quotes one word for a systemd unit: double quotes, `\` and `"` escaped, `%` doubled (specifiers), `$` doubled when the line expands variables. */
export function systemdQuote(word: string, expandsVariables: boolean): string {
  let escaped = word.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%');
  if (expandsVariables) escaped = escaped.replace(/\$/g, '$$$$');
  return `"${escaped}"`;
}

/** The systemd user unit: starts the daemon at login (default.target), restarts it when it fails, logs to the journal. */
export function systemdUnit(spec: ServiceSpec): string {
  const exec = [spec.node, ...spec.args].map((w) => systemdQuote(w, true)).join(' ');
  const env = Object.entries(spec.env).map(([name, value]) => `Environment=${systemdQuote(`${name}=${value}`, false)}`);
  return [
    '# Written by `switchboard service install`; remove it with `switchboard service uninstall`.',
    '[Unit]',
    'Description=switchboard daemon (coding agents as durable background sessions)',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${exec}`,
    // WorkingDirectory= takes the path as it is (quotes would be part of it); only specifiers need escaping.
    `WorkingDirectory=${spec.workingDirectory.replace(/%/g, '%%')}`,
    ...env,
    'Restart=on-failure',
    'RestartSec=5',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}
