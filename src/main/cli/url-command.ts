import { resolveDataDir } from '../gateway/data-dir';
import { headlessUrl, readSavedAccess, savedAccessPath } from '../headless/saved-access';
import { parseCommandArgs, type Command } from './command';

const USAGE = `Usage: homing url [--data-dir DIR]

  Prints the headless window's URL (with its access token) for this data
  directory: the one \`homing gateway\` serves, now or at its next start, as long
  as its port stays free. Anyone with this URL controls the gateway: keep it to
  yourself. Delete headless.json in the data directory to get a new token.

  --data-dir DIR  data directory (default: $HOMING_DATA_DIR, else the tray app's)`;

export const urlCommand: Command = {
  name: 'url',
  summary: "print the headless window's URL (with its access token)",
  usage: USAGE,
  async run(args, context) {
    const { values } = parseCommandArgs('url', args, { 'data-dir': { type: 'string' } });
    const dataDir = resolveDataDir(values['data-dir'], context.env);
    const saved = readSavedAccess(dataDir);
    if (!saved.ok) {
      context.stderr(
        saved.reason === 'missing'
          ? `homing: no headless window has been served from ${dataDir} yet: start \`npx homing gateway\` (it prints the URL)`
          : `homing: ${saved.message}; delete ${savedAccessPath(dataDir)} and start \`npx homing gateway\` for a new URL`,
      );
      return 1;
    }
    context.stdout(headlessUrl(saved.access));
    return 0;
  },
};
