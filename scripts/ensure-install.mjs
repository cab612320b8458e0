// Runs before `npm start` and `npm test` (npm's prestart and pretest): when node_modules is missing or does not match
// package-lock.json, installs it with a quiet `npm ci`, so a fresh clone needs nothing but `npm start` or `npm test`.
// When it matches (after `npm install`, `npm ci`, or the last run) it only reads two files and exits.
import { ensureInstall } from './install-state.mjs';

process.exitCode = ensureInstall();
