import type { ServiceSpec } from './service-spec.ts';

/** The launchd label (and the plist's name under ~/Library/LaunchAgents). */
export const LAUNCHD_LABEL = 'local.switchboard.daemon';

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const str = (text: string): string => `<string>${xml(text)}</string>`;

/** The launchd agent: runs at login (RunAtLoad), restarts the daemon when it exits with a failure (KeepAlive), logs to <home>/daemon.log. */
export function launchdPlist(spec: ServiceSpec): string {
  const env = Object.entries(spec.env).map(([name, value]) => `    <key>${xml(name)}</key>\n    ${str(value)}`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<!-- Written by `switchboard service install`; remove it with `switchboard service uninstall`. -->',
    '<plist version="1.0">',
    '<dict>',
    `  <key>Label</key>\n  ${str(LAUNCHD_LABEL)}`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...[spec.node, ...spec.args].map((a) => `    ${str(a)}`),
    '  </array>',
    `  <key>WorkingDirectory</key>\n  ${str(spec.workingDirectory)}`,
    '  <key>EnvironmentVariables</key>',
    '  <dict>',
    ...env,
    '  </dict>',
    '  <key>RunAtLoad</key>\n  <true/>',
    '  <key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n  </dict>',
    '  <key>ThrottleInterval</key>\n  <integer>10</integer>',
    `  <key>StandardOutPath</key>\n  ${str(spec.logFile)}`,
    `  <key>StandardErrorPath</key>\n  ${str(spec.logFile)}`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
