/// <reference lib="dom" />
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/browser';
import { FakeSpeech } from './support/fake-speech';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { openWindow, showView } from './window-fixtures/window-page';
import { editAgent, settingsForm } from './window-platforms/open-form';

/** Issue 38: the two settings photos and voice notes need — a speech server (`speech`) and an OpenAI-compatible agent's `images` — set from the window. */

let browser: Browser;
let speech: FakeSpeech;
let dataDir: string;
let gateway: RunningGateway;
let file: string;
beforeAll(async () => {
  browser = await launchChromium();
  speech = await FakeSpeech.start();
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-speech-'));
  file = join(dataDir, 'config.json');
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
});
afterAll(async () => {
  await gateway?.stop();
  await speech?.close();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function writtenConfig(): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Platforms → Edit agent: the agent's form and, beside it, Voice notes. */
async function openSettings(): Promise<{ page: Page; errors: string[] }> {
  const opened = await openWindow(browser, gateway.url);
  await showView(opened.page, 'platforms');
  await editAgent(opened.page);
  await settingsForm(opened.page, 'speech').waitFor();
  return opened;
}

describe('voice notes and vision in the window’s settings', () => {
  it('tests a transcription URL against the speech server, then saves it as config.json’s speech', async () => {
    const { page, errors } = await openSettings();
    const form = settingsForm(page, 'speech');
    await form.getByLabel('Transcribe voice notes with').selectOption('openai');
    await form.getByLabel('Transcription URL', { exact: true }).fill(speech.url);
    await form.getByRole('button', { name: 'Test', exact: true }).click();
    const message = page.getByTestId('speech-form-message');
    await message.getByText('the speech server transcribed a test recording').waitFor({ timeout: 15_000 });
    expect(await message.getAttribute('role')).toBe('status');
    expect(speech.requests).toHaveLength(1);

    await form.getByRole('button', { name: 'Save voice notes' }).click();
    await message.getByText(/^Saved/).waitFor();
    expect(writtenConfig()).toEqual({ speech: { type: 'openai', url: speech.url } });
    await page.getByTestId('speech-line').getByText(`Voice notes are transcribed by ${speech.url}.`).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('saves “takes images (vision)” on an OpenAI-compatible agent as images: true, and leaves speech as it is', async () => {
    const { page, errors } = await openSettings();
    const form = settingsForm(page, 'agent');
    await form.getByLabel('Kind of agent').selectOption('openai');
    await form.getByLabel('Model', { exact: true }).fill('llava');
    const vision = form.getByLabel('Takes images (vision)');
    expect(await vision.isChecked()).toBe(false);
    await vision.check();
    await form.getByRole('button', { name: 'Save agent' }).click();
    await page.getByTestId('agent-form-message').getByText(/^Saved/).waitFor();
    expect(writtenConfig()).toEqual({
      agent: { type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llava', images: true },
      speech: { type: 'openai', url: speech.url },
    });

    // Unticked, the key is left out: off is config.json's default.
    await vision.uncheck();
    await form.getByRole('button', { name: 'Save agent' }).click();
    await expect.poll(() => (writtenConfig().agent as Record<string, unknown>).images, { timeout: 5_000 }).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('refuses a URL that is not http(s) in words at the field, and writes nothing', async () => {
    const before = readFileSync(file, 'utf8');
    const requests = speech.requests.length;
    const { page, errors } = await openSettings();
    const form = settingsForm(page, 'speech');
    const url = form.getByLabel('Transcription URL', { exact: true });
    expect(await url.inputValue()).toBe(speech.url);
    await url.fill('file:///etc/passwd');
    const message = page.getByTestId('speech-form-message');

    await form.getByRole('button', { name: 'Test', exact: true }).click();
    await message.getByText(/^Transcription URL must be an http:\/\/ or https:\/\/ URL/).waitFor();
    expect(await message.getAttribute('role')).toBe('alert');
    expect(await url.getAttribute('aria-invalid')).toBe('true');

    await form.getByRole('button', { name: 'Save voice notes' }).click();
    await message.getByText(/^Not saved: Transcription URL must be an http:\/\/ or https:\/\/ URL.*\(speech\.url\)\.$/).waitFor();
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(speech.requests).toHaveLength(requests);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('turned off, removes the speech key and keeps every other one', async () => {
    const { page, errors } = await openSettings();
    const form = settingsForm(page, 'speech');
    await form.getByLabel('Transcribe voice notes with').selectOption('off');
    expect(await form.getByRole('button', { name: 'Test', exact: true }).isDisabled()).toBe(true);
    await form.getByRole('button', { name: 'Save voice notes' }).click();
    await page.getByTestId('speech-form-message').getByText(/^Saved/).waitFor();
    expect(writtenConfig()).toEqual({ agent: { type: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'llava' } });
    await page.getByTestId('speech-line').getByText(/^Voice notes are not transcribed/).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
