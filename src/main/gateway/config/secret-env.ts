import { z } from 'zod';

/**
 * The variable a password is read from must be named like one (`…_PASSWORD`,
 * `…_PASS`, `…_TOKEN`, `…_KEY`): a config cannot make Homing send HOME or PATH to
 * a server as its password. The same rule as `apiKeyEnv`'s.
 */
export const secretEnvName = z.string().regex(/^(?:[A-Za-z_][A-Za-z0-9_]*_)?(?:PASSWORD|PASSWD|PASS|TOKEN|KEY|SECRET)$/i, {
  error: 'must name a variable that holds a password: its name ends in _PASSWORD, _PASS, _TOKEN or _KEY, like IRC_PASSWORD',
});
