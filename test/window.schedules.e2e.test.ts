/// <reference lib="dom" />
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { ScheduleRow } from '../src/shared/api';
import { connectApi, type ApiSocket } from './support/api-socket';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { freePort } from './support/ports';
import { openWindow, runDemo, screenshot } from './window-fixtures/window-page';

/**
 * Issue 40's Schedules view in Debian's Chromium, against a real `homing
 * gateway` with a command agent: a schedule made in the form is listed with
 * its next run; Run now answers in the window's chat; Pause, Edit and Delete
 * change the list (and the gateway agrees); a "when" the gateway does not
 * understand is refused in its words, with nothing typed lost.
 */

/** A command agent that answers every message with "Scheduled answer: <the message>". */
const AGENT_SCRIPT =
  "let raw = ''; process.stdin.on('data', (chunk) => (raw += chunk)).on('end', () => process.stdout.write('Scheduled answer: ' + JSON.parse(raw).message.text + '\\n'));";

let browser: Browser;
let dataDir: string;
let gateway: RunningGateway;
let api: ApiSocket;
beforeAll(async () => {
  browser = await launchChromium();
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-schedules-'));
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ agent: { type: 'command', command: process.execPath, args: ['-e', AGENT_SCRIPT] } }));
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
  api = await connectApi(gateway);
});
afterAll(async () => {
  api?.close();
  await gateway?.stop();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function schedules(): Promise<readonly ScheduleRow[]> {
  return (await api.call<{ schedules: readonly ScheduleRow[] }>('listSchedules')).schedules;
}

async function openSchedules(width: number, scheme: 'light' | 'dark' = 'light', on: RunningGateway = gateway): Promise<{ page: Page; errors: string[] }> {
  const opened = await openWindow(browser, on.url, { width, scheme });
  await opened.page.locator('nav button[data-view="schedules"]').click();
  await opened.page.getByRole('heading', { name: 'Schedules', level: 2 }).waitFor();
  return opened;
}

/** A time of day twelve hours from now (the gateway runs on this machine, in its zone): no run comes by itself during the test. */
function farFromNow(): { hour: number; text: string } {
  const hour = (new Date().getHours() + 12) % 24;
  return { hour, text: `${String(hour).padStart(2, '0')}:00` };
}

describe('the Schedules view', () => {
  it('explains schedules and the chat commands when there is none', async () => {
    const { page, errors } = await openSchedules(1280);
    const empty = page.getByTestId('schedules-empty');
    await empty.waitFor();
    const text = await empty.textContent();
    expect(text).toContain('/every <when> <prompt>');
    expect(text).toContain('/once <when> <text>');
    expect(text).toContain('/schedules');
    await screenshot(page, 'schedules-empty-light-1280');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('makes a schedule in the form, runs it now, pauses, edits and deletes it', async () => {
    const { page, errors } = await openSchedules(1280);
    const at = farFromNow();

    // Make: every day at a time twelve hours away, a prompt, in this window's chat.
    await page.getByTestId('new-schedule').click();
    const form = page.getByTestId('schedule-form');
    // The form opens with focus on its first field.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-field'))).toBe('name');
    await form.getByLabel('Name (optional)').fill('Plant reminder');
    await form.getByLabel('When', { exact: true }).fill(`day at ${at.text}`);
    await form.getByLabel('Prompt to the agent').fill('Say good morning');
    expect(await form.getByTestId('schedule-where').inputValue()).toBe('');
    expect(await form.getByLabel('Grace (minutes)').inputValue()).toBe('120');
    await form.getByRole('button', { name: 'Make schedule' }).click();
    await form.waitFor({ state: 'detached' });
    await page.getByTestId('schedules-note').getByText(/“Plant reminder” is made: next run in 1[12] h/).waitFor();

    const row = page.getByTestId('schedule-row').filter({ hasText: 'Plant reminder' });
    await row.waitFor();
    expect(await row.getByTestId('schedule-when').textContent()).toBe(`every day at ${at.text}`);
    expect(await row.getByTestId('schedule-where-words').textContent()).toBe("this window's chat");
    expect(await row.getByTestId('schedule-what').textContent()).toBe('Asks the agent: Say good morning');
    expect(await row.getByTestId('schedule-next').textContent()).toMatch(/^in 1[12] h · \S/);
    expect(await row.getByTestId('schedule-last').textContent()).toBe('not run yet');
    // The gateway has it as the form said.
    const [made] = await schedules();
    expect(made).toMatchObject({ name: 'Plant reminder', repeat: 'every', cron: `0 ${at.hour} * * *`, action: 'prompt', body: 'Say good morning', graceMinutes: 120, paused: false, createdVia: 'window' });
    expect(made!.where.platform).toBe('local');
    expect(made!.nextRunAt).toBeGreaterThan(Date.now() + 10 * 3_600_000);

    // Run now: its last run is answered, and the reply is in the window's chat.
    await row.getByRole('button', { name: 'Run Plant reminder now' }).click();
    await row.locator('[data-testid="schedule-last"][data-state="answered"]').waitFor({ timeout: 20_000 });
    expect(await row.getByTestId('schedule-last').textContent()).toMatch(/^answered \(run by hand\)/);
    await row.getByTestId('schedule-delivery').getByText(/delivered/).waitFor({ timeout: 10_000 });
    // Run now leaves the next due time as it was.
    expect((await schedules())[0]!.nextRunAt).toBe(made!.nextRunAt);
    await screenshot(page, 'schedules-ran-light-1280');
    await row.getByTestId('schedule-open-reply').click();
    expect(await page.locator('nav button[data-view="conversations"]').getAttribute('aria-current')).toBe('page');
    await page.getByTestId('chat-assistant').last().getByText(/Scheduled answer: .*Say good morning/).waitFor({ timeout: 10_000 });
    // The prompt is the schedule's, not the owner's: its bubble says so.
    expect(await page.getByTestId('chat-scheduled').last().textContent()).toMatch(/^⏰ Schedule “Plant reminder” · every day at \d\d:00$/);

    // Pause: listed paused, and no next run.
    await page.locator('nav button[data-view="schedules"]').click();
    await row.getByRole('button', { name: 'Pause Plant reminder' }).click();
    await row.getByTestId('schedule-paused').waitFor();
    expect(await row.getByTestId('schedule-next').textContent()).toBe('paused');
    expect(await row.getAttribute('data-paused')).toBe('true');
    expect((await schedules())[0]!.paused).toBe(true);
    await row.getByRole('button', { name: 'Resume Plant reminder' }).waitFor();

    // Edit: the same form, filled in; the changes are listed.
    await row.getByRole('button', { name: 'Edit Plant reminder' }).click();
    const edit = row.getByTestId('schedule-form');
    expect(await edit.getByLabel('Name (optional)').inputValue()).toBe('Plant reminder');
    expect(await edit.getByLabel('When', { exact: true }).inputValue()).toBe(`day at ${at.text}`);
    expect(await edit.getByLabel('Prompt to the agent').inputValue()).toBe('Say good morning');
    await edit.getByLabel('Name (optional)').fill('Weekday briefing');
    await edit.getByLabel('When', { exact: true }).fill('weekday at 7:45');
    await edit.getByLabel('Send a fixed text').check();
    await edit.getByLabel('Text to send').fill('Water the plants');
    await edit.getByRole('button', { name: 'Save schedule' }).click();
    const edited = page.getByTestId('schedule-row').filter({ hasText: 'Weekday briefing' });
    await edited.getByTestId('schedule-note').getByText('Saved.').waitFor();
    expect(await edited.getByTestId('schedule-when').textContent()).toBe('every weekday at 07:45');
    expect(await edited.getByTestId('schedule-what').textContent()).toBe('Sends the text: Water the plants');
    // Still paused: Edit changes only what the form changed.
    expect(await edited.getByTestId('schedule-next').textContent()).toBe('paused');
    expect((await schedules())[0]).toMatchObject({ id: made!.id, name: 'Weekday briefing', cron: '45 7 * * 1-5', action: 'text', body: 'Water the plants', paused: true });
    // Focus goes back to the card's Edit button.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Edit Weekday briefing');
    await screenshot(page, 'schedules-paused-light-1280');

    // Delete asks first; Escape keeps it, and focus goes back to its Delete button.
    await edited.getByRole('button', { name: 'Delete Weekday briefing' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete “Weekday briefing”?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Delete Weekday briefing');
    expect(await schedules()).toHaveLength(1);
    // Confirmed: gone from the list and from the gateway.
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await edited.waitFor({ state: 'detached' });
    await page.getByTestId('schedules-note').getByText('“Weekday briefing” is deleted.').waitFor();
    await page.getByTestId('schedules-empty').waitFor();
    expect(await schedules()).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('makes a one-time schedule, and shows the gateway’s words for a "when" it does not understand, keeping the form', async () => {
    const { page, errors } = await openSchedules(360, 'dark');
    await page.getByTestId('new-schedule').click();
    const form = page.getByTestId('schedule-form');
    await form.getByLabel('Name (optional)').fill('Tea');
    await form.getByLabel('Once', { exact: true }).check();
    // The examples follow the kind of repeat.
    await form.getByText(/For example “14:30”, “tomorrow at 9:00”/).waitFor();
    await form.getByLabel('When', { exact: true }).fill('sometime soonish');
    await form.getByLabel('Send a fixed text').check();
    await form.getByLabel('Text to send').fill('The tea is ready');
    await form.getByRole('button', { name: 'Make schedule' }).click();
    const error = form.getByTestId('schedule-form-error');
    await error.getByText(/^Could not make the schedule: the time is not understood; say when like /).waitFor();
    // Nothing typed is lost; the field at fault is marked and has focus.
    const when = form.getByLabel('When', { exact: true });
    expect(await when.inputValue()).toBe('sometime soonish');
    expect(await when.getAttribute('aria-invalid')).toBe('true');
    // The refusal is the field's description, read out as focus lands on it.
    expect(await when.getAttribute('aria-describedby')).toContain(await error.getAttribute('id'));
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-field'))).toBe('when');
    expect(await form.getByLabel('Name (optional)').inputValue()).toBe('Tea');
    expect(await form.getByLabel('Text to send').inputValue()).toBe('The tea is ready');
    expect((await schedules()).filter((schedule) => schedule.name === 'Tea')).toEqual([]);
    await screenshot(page, 'schedules-form-error-dark-360');

    await when.fill('in 30 minutes');
    await form.getByRole('button', { name: 'Make schedule' }).click();
    await form.waitFor({ state: 'detached' });
    const row = page.getByTestId('schedule-row').filter({ hasText: 'Tea' });
    expect(await row.getByTestId('schedule-when').textContent()).toMatch(/^once on \d{4}-\d\d-\d\d at \d\d:\d\d$/);
    expect(await row.getByTestId('schedule-next').textContent()).toMatch(/^in 30 min · /);
    const tea = (await schedules()).find((schedule) => schedule.name === 'Tea');
    expect(tea).toMatchObject({ name: 'Tea', repeat: 'once', action: 'text', body: 'The tea is ready' });
    expect(Math.abs(tea!.onceAt! - (Date.now() + 30 * 60_000))).toBeLessThan(2 * 60_000);
    // Every action is on screen at 360 px, and nothing scrolls sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    for (const name of ['Pause Tea', 'Run Tea now', 'Edit Tea', 'Delete Tea']) {
      const box = await row.getByRole('button', { name }).boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 360, `${name} is on screen`).toBe(true);
    }
    await screenshot(page, 'schedules-list-dark-360');
    await api.call('removeSchedule', { id: tea!.id });
    // Removed elsewhere (the CLI, a chat): the list follows the gateway's event.
    await row.waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('the Schedules view on demo data', () => {
  let demoDir: string;
  let demo: RunningGateway;
  let demoApi: ApiSocket;
  beforeAll(async () => {
    demoDir = mkdtempSync(join(tmpdir(), 'homing-window-schedules-demo-'));
    runDemo(demoDir, ['--irc-port', String(await freePort())]);
    demo = await startHeadlessGateway(['--data-dir', demoDir]);
    demoApi = await connectApi(demo);
  });
  afterAll(async () => {
    demoApi?.close();
    await demo?.stop();
    rmSync(demoDir, { recursive: true, force: true });
  });

  it('writes in a conversation chosen from the known ones, which Edit keeps', async () => {
    const { page, errors } = await openSchedules(1280, 'light', demo);
    await page.getByTestId('new-schedule').click();
    const form = page.getByTestId('schedule-form');
    const where = form.getByTestId('schedule-where');
    // This window's chat first, then each known conversation by its title and platform.
    const options = await where.locator('option').evaluateAll((elements) => elements.map((element) => ({ value: (element as HTMLOptionElement).value, text: element.textContent ?? '' })));
    expect(options[0]).toEqual({ value: '', text: "This window's chat" });
    const irc = options.find((option) => option.text.endsWith(' on IRC'));
    expect(irc, JSON.stringify(options)).toBeDefined();
    await where.selectOption(irc!.value);
    await form.getByLabel('Once', { exact: true }).check();
    await form.getByLabel('When', { exact: true }).fill('in 2 hours');
    await form.getByLabel('Send a fixed text').check();
    await form.getByLabel('Text to send').fill('Standup in five minutes');
    await form.getByRole('button', { name: 'Make schedule' }).click();
    await form.waitFor({ state: 'detached' });
    const row = page.getByTestId('schedule-row').first();
    expect(await row.getByTestId('schedule-where-words').textContent()).toBe(irc!.text);
    const made = (await demoApi.call<{ schedules: readonly ScheduleRow[] }>('listSchedules')).schedules[0]!;
    expect(made.where).toMatchObject({ sessionKey: irc!.value, platform: 'irc' });
    // No name given: the gateway named it.
    expect(made.name.length).toBeGreaterThan(0);
    expect(await row.getByTestId('schedule-name').textContent()).toBe(made.name);

    // Edit shows where it writes, and keeps it.
    await row.getByRole('button', { name: `Edit ${made.name}` }).click();
    const edit = row.getByTestId('schedule-form');
    expect(await edit.getByTestId('schedule-where').inputValue()).toBe(irc!.value);
    expect(await edit.getByTestId('schedule-where').isDisabled()).toBe(true);
    await edit.getByText('A schedule keeps its conversation').waitFor();
    await screenshot(page, 'schedules-edit-irc-light-1280');
    await edit.getByRole('button', { name: 'Cancel' }).click();
    await edit.waitFor({ state: 'detached' });
    await demoApi.call('removeSchedule', { id: made.id });
    await row.waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
    await page.close();
  });
});
