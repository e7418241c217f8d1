/// <reference lib="dom" />
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/browser';
import { startHeadlessGateway, type RunningGateway } from './support/gateway-process';
import { openWindow, screenshot, showView } from './window-fixtures/window-page';

/**
 * Issue 38's window: files sent from the local chat (paperclip and drag and
 * drop) and shown in its transcript — a thumbnail, a player with the voice
 * note's transcript, a file chip that saves — in Debian's Chromium against a
 * real `homing gateway` with a command agent and a command speech engine.
 */

const REPLY_AGENT = fileURLToPath(new URL('./fixtures/reply-agent.mjs', import.meta.url));
const SPEECH = fileURLToPath(new URL('./window-fixtures/speech-hello.mjs', import.meta.url));

/** A PNG of `width` × `height` orange pixels, written by hand (signature, IHDR, IDAT, IEND). */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, Buffer.from([0xf0, 0x80, 0x20]))]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

/** Half a second of silence: a RIFF/WAVE header, 8 kHz mono 16-bit PCM. */
function wav(): Buffer {
  const samples = Buffer.alloc(8000);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16_000, 28); // bytes a second
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
}

const PHOTO = png(40, 30);
const NOTES = Buffer.from('milk, eggs, the walk at six\n');
/** An image that is a program: never shown in place, only offered to save. */
const DRAWING = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>window.pwned = true</script><rect width="9" height="9"/></svg>');

let browser: Browser;
let dataDir: string;
let gateway: RunningGateway;
beforeAll(async () => {
  browser = await launchChromium();
  dataDir = mkdtempSync(join(tmpdir(), 'homing-window-media-'));
  writeFileSync(
    join(dataDir, 'config.json'),
    JSON.stringify({
      agent: { type: 'command', command: process.execPath, args: [REPLY_AGENT] },
      speech: { type: 'command', command: process.execPath, args: [SPEECH, '{file}'] },
      // Small enough that a test file goes over it in a few pieces.
      media: { maxFileMB: 1.2 },
    }),
  );
  gateway = await startHeadlessGateway(['--data-dir', dataDir]);
});
afterAll(async () => {
  await gateway?.stop();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function openLocalChat(width: number) {
  const opened = await openWindow(browser, gateway.url, { width });
  if (width <= 640) await opened.page.getByTestId('conversation').filter({ hasText: 'Local chat' }).click();
  await opened.page.getByTestId('composer').waitFor();
  return opened;
}

/** Files dropped on the chat as a desktop's file manager drops them (a DataTransfer of Files). */
async function dropFiles(page: Page, files: { name: string; type: string; bytes: Buffer }[]): Promise<void> {
  const transfer = await page.evaluateHandle(
    (given) => {
      const data = new DataTransfer();
      for (const file of given) data.items.add(new File([new Uint8Array(file.bytes)], file.name, { type: file.type }));
      return data;
    },
    files.map((file) => ({ ...file, bytes: [...file.bytes] })),
  );
  const log = page.getByTestId('chat-log');
  await log.dispatchEvent('dragenter', { dataTransfer: transfer });
  await log.dispatchEvent('dragover', { dataTransfer: transfer });
  await log.dispatchEvent('drop', { dataTransfer: transfer });
}

/** The local chat's media folder (`media/<session id>/`): the one folder there besides the uploads'. */
function sessionMediaDir(): string {
  const sessions = readdirSync(join(dataDir, 'media')).filter((name) => name !== 'uploads');
  expect(sessions).toHaveLength(1);
  return join(dataDir, 'media', sessions[0]!);
}

describe('files in the local chat', () => {
  it('sends a photo, a text file and an SVG (picker) and a voice note (dropped): a thumbnail that opens larger, a chip that saves, a player with its transcript', async () => {
    const { page, errors } = await openLocalChat(1280);
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Attach files' }).click();
    await (
      await chooser
    ).setFiles([
      { name: 'walk.png', mimeType: 'image/png', buffer: PHOTO },
      { name: 'notes.txt', mimeType: 'text/plain', buffer: NOTES },
      { name: 'spare.txt', mimeType: 'text/plain', buffer: Buffer.from('not sent') },
      { name: 'drawing.svg', mimeType: 'image/svg+xml', buffer: DRAWING },
    ]);
    await dropFiles(page, [{ name: 'voice.wav', type: 'audio/wav', bytes: wav() }]);
    const chips = page.getByTestId('attachment');
    await chips.filter({ hasText: 'voice.wav' }).waitFor();
    expect(await chips.count()).toBe(5);
    // A chosen file can be taken back before sending.
    await page.getByRole('button', { name: 'Remove spare.txt' }).click();
    await chips.filter({ hasText: 'spare.txt' }).waitFor({ state: 'detached' });
    expect((await chips.allTextContents()).map((text) => text.replace(/×$/, ''))).toEqual([`walk.png${PHOTO.length} bytes`, 'notes.txt28 bytes', `drawing.svg${DRAWING.length} bytes`, 'voice.wav8 kB']);
    await screenshot(page, 'chat-attachments-1280');

    // Files only: the message needs no words.
    await page.getByRole('button', { name: 'Send' }).click();
    await chips.first().waitFor({ state: 'detached' });
    // The agent got the three files' bytes (the reply agent names each with its hash).
    const reply = page.getByTestId('chat-assistant').last();
    await reply.getByText(/\[file audio audio\/wav 8044 /).waitFor({ timeout: 15_000 });
    expect(await reply.textContent()).toMatch(/\[file image image\/png \d+ sha256:[0-9a-f]{16}\][\s\S]*\[file document text\/plain 28 /);

    const message = page.getByTestId('chat-user').last();
    const thumbnail = message.getByTestId('media-image').locator('img');
    await thumbnail.waitFor();
    await page.waitForFunction((image) => image instanceof HTMLImageElement && image.complete && image.naturalWidth > 0, await thumbnail.elementHandle());
    expect(await thumbnail.evaluate((image: HTMLImageElement) => [image.naturalWidth, image.naturalHeight, image.src.startsWith('blob:')])).toEqual([40, 30, true]);

    // Click: the photo larger, in a dialog that Escape closes.
    await message.getByRole('button', { name: 'View walk.png larger' }).click();
    const viewer = page.getByTestId('media-viewer');
    await viewer.locator('img').waitFor();
    await screenshot(page, 'chat-photo-viewer-1280');
    await page.keyboard.press('Escape');
    await viewer.waitFor({ state: 'detached' });

    // The text file is a chip with its name and size, saved as a download, never opened.
    const chip = message.getByTestId('media-file').filter({ hasText: 'notes.txt' });
    expect(await chip.textContent()).toContain('28 bytes');
    const download = page.waitForEvent('download');
    await chip.getByRole('button', { name: 'Save notes.txt' }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toBe('notes.txt');
    expect(readFileSync(await saved.path())).toEqual(NOTES);

    // The SVG is a file to save like any other: no <img>, <object> or frame shows it, and its script never ran.
    await message.getByTestId('media-file').filter({ hasText: 'drawing.svg' }).getByRole('button', { name: 'Save drawing.svg' }).waitFor();
    expect(await message.locator('img').count()).toBe(1);
    expect(await page.locator('iframe, object, embed').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: boolean }).pwned)).toBeUndefined();

    // The voice note: a player, and the speech engine's words under it.
    const voice = message.getByTestId('media-audio');
    await voice.locator('audio[controls]').waitFor();
    expect(await voice.locator('audio').getAttribute('src')).toMatch(/^blob:/);
    const transcript = message.getByTestId('media-transcript');
    await transcript.getByText('hello from the walk').waitFor();
    expect(await transcript.textContent()).toMatch(/^Transcript\s*hello from the walk/);
    await screenshot(page, 'chat-media-1280');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says "expired" for a file removed after the retention time, and reads nothing for it; Status counts the files still kept', async () => {
    const dir = sessionMediaDir();
    const photo = readdirSync(dir).find((name) => name.endsWith('.png'));
    expect(photo).toBeDefined();
    const id = photo!.slice(0, 16);
    // What the retention sweep leaves (media-store.ts removeOlderThan).
    for (const name of readdirSync(dir)) if (name.startsWith(`${id}.`)) rmSync(join(dir, name));
    writeFileSync(join(dir, `${id}.expired`), '');
    // The gateway counts the files kept at most once a minute: a new one counts now.
    await gateway.stop();
    gateway = await startHeadlessGateway(['--data-dir', dataDir]);

    const { page, errors } = await openLocalChat(360);
    const requests: string[] = [];
    page.on('websocket', (socket) => socket.on('framesent', (frame) => requests.push(String(frame.payload))));
    const message = page.getByTestId('chat-user').last();
    const expired = message.getByTestId('media-unavailable');
    await expired.waitFor();
    expect(await expired.textContent()).toMatch(/walk\.png\s*expired/);
    expect(await message.getByTestId('media-image').count()).toBe(0);
    // The others are still there.
    await message.getByTestId('media-file').filter({ hasText: 'notes.txt' }).waitFor();
    // A file is read when its place scrolls into view (at 360 px the voice note starts above it).
    await message.getByTestId('media-audio').scrollIntoViewIfNeeded();
    await message.locator('audio[controls]').waitFor();
    expect(requests.join('\n')).not.toContain(id);
    await screenshot(page, 'chat-media-expired-360');

    await showView(page, 'status');
    // The text file (28 bytes), the drawing and the voice note (8044 bytes); the expired photo is not counted.
    expect(await page.getByTestId('media-usage').textContent()).toBe(`Media: 3 files, ${((28 + DRAWING.length + 8044) / 1000).toFixed(1)} kB kept for 30 days`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says in words why the gateway refused a file too large, and sends once it is removed', async () => {
    const { page, errors } = await openLocalChat(1280);
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Attach files' }).click();
    // Over the 1.2 MB limit, in three pieces: the third is refused.
    await (await chooser).setFiles([{ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(1_300_000, 7) }]);
    await page.getByLabel('Message to your agent').fill('a big one');
    await page.getByRole('button', { name: 'Send' }).click();
    const chip = page.getByTestId('attachment').filter({ hasText: 'big.bin' });
    await chip.getByRole('alert').getByText(/Could not upload big\.bin: .*too large.*the limit is 1\.2 MB/).waitFor();
    // Nothing was sent; the words stay for another try.
    expect(await page.getByLabel('Message to your agent').inputValue()).toBe('a big one');
    await screenshot(page, 'chat-upload-refused-1280');
    await page.getByRole('button', { name: 'Remove big.bin' }).click();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('chat-assistant').last().getByText('You said: a big one').waitFor();
    expect(errors).toEqual([]);
    // The refused upload left nothing behind.
    expect(readdirSync(join(dataDir, 'media', 'uploads')).filter((name) => name.endsWith('.part'))).toEqual([]);
    expect(existsSync(join(dataDir, 'media'))).toBe(true);
    await page.close();
  });
});
