import { describe, expect, it } from 'vitest';
import { readMessage, type SyncEvent } from './inbound';
import { parseMxc } from './media-offer';

const event = (content: Record<string, unknown>): SyncEvent => ({ type: 'm.room.message', event_id: '$e', sender: '@alice:example.org', content });
const MXC = 'mxc://example.org/AbCdEf0123456789_-xyzQRS';

describe('Matrix media messages as offers of their files', () => {
  it('offers a photo as Element sends it, with its type, size and name, described when it has no caption', () => {
    expect(readMessage(event({ msgtype: 'm.image', body: 'IMG_0042.jpg', url: MXC, info: { mimetype: 'image/jpeg', size: 48_213, w: 800, h: 600 } }))).toMatchObject({
      kind: 'message',
      text: '[photo: IMG_0042.jpg]',
      media: [{ kind: 'image', source: MXC, mime: 'image/jpeg', name: 'IMG_0042.jpg', size: 48_213 }],
    });
    // A body that is a description, not a file name, is no name.
    expect(readMessage(event({ msgtype: 'm.image', body: 'image attachment', url: MXC }))).toMatchObject({ text: '[photo]', media: [{ kind: 'image', source: MXC }] });
    expect(readMessage(event({ msgtype: 'm.image', url: MXC }))).toMatchObject({ text: '[photo]', media: [{ kind: 'image' }] });
  });

  it('takes the body as the caption only when `filename` is there and differs (spec v1.10 media captions)', () => {
    expect(readMessage(event({ msgtype: 'm.image', body: 'what is this plant?', filename: 'plant.jpg', url: MXC, info: { mimetype: 'image/jpeg' } }))).toMatchObject({
      text: 'what is this plant?',
      media: [{ kind: 'image', name: 'plant.jpg' }],
    });
    expect(readMessage(event({ msgtype: 'm.file', body: 'report.pdf', filename: 'report.pdf', url: MXC, info: { mimetype: 'application/pdf', size: 1234 } }))).toMatchObject({
      text: '[file: report.pdf]',
      media: [{ kind: 'document', mime: 'application/pdf', name: 'report.pdf', size: 1234 }],
    });
    // The reply quote of a captioned file is removed like any reply's.
    expect(
      readMessage(event({ msgtype: 'm.file', body: '> <@homing:example.org> You said: hi\n\nand this file', filename: 'notes.txt', url: MXC, 'm.relates_to': { 'm.in_reply_to': { event_id: '$bot' } } })),
    ).toMatchObject({ text: 'and this file', inReplyTo: '$bot', media: [{ kind: 'document', name: 'notes.txt' }] });
  });

  it('tells a voice note (MSC3245) from other audio, with its duration from milliseconds', () => {
    const voice = readMessage(
      event({
        msgtype: 'm.audio',
        body: 'Voice message',
        url: MXC,
        info: { mimetype: 'audio/ogg', size: 9_000, duration: 12_340 },
        'org.matrix.msc1767.audio': { duration: 12_340, waveform: [1, 2, 3] },
        'org.matrix.msc3245.voice': {},
      }),
    );
    expect(voice).toMatchObject({ text: '[voice note, 12 s]', media: [{ kind: 'voice', mime: 'audio/ogg', size: 9_000, durationS: 12.3 }] });
    if (voice.kind === 'message') expect(voice.media[0]).not.toHaveProperty('name');
    // Only the extensible-events block: still a voice note, its duration from there.
    expect(readMessage(event({ msgtype: 'm.audio', body: 'Voice message', url: MXC, 'org.matrix.msc1767.audio': { duration: 4_000 } }))).toMatchObject({ media: [{ kind: 'voice', durationS: 4 }] });
    expect(readMessage(event({ msgtype: 'm.audio', body: 'song.mp3', url: MXC, info: { mimetype: 'audio/mpeg', duration: 185_000 } }))).toMatchObject({
      text: '[audio: song.mp3, 3 min 05 s]',
      media: [{ kind: 'audio', name: 'song.mp3', durationS: 185 }],
    });
    expect(readMessage(event({ msgtype: 'm.video', body: 'clip.mp4', url: MXC, info: { mimetype: 'video/mp4', duration: 3_000 } }))).toMatchObject({ text: '[video: clip.mp4, 3 s]', media: [{ kind: 'video', durationS: 3 }] });
  });

  it('offers no encrypted file (Homing holds no keys) and says so in the text', () => {
    const encrypted = readMessage(event({ msgtype: 'm.image', body: 'cat.png', file: { url: MXC, key: { k: 'secret' }, iv: 'x', hashes: {}, v: 'v2' }, info: { mimetype: 'image/png' } }));
    expect(encrypted).toMatchObject({ kind: 'message', media: [] });
    if (encrypted.kind === 'message') expect(encrypted.text).toMatch(/^\[photo: cat\.png — end-to-end encrypted; Homing cannot open encrypted files yet\]$/);
    const captioned = readMessage(event({ msgtype: 'm.file', body: 'see this', filename: 'a.pdf', file: { url: MXC } }));
    expect(captioned).toMatchObject({ text: 'see this\n[file: a.pdf — end-to-end encrypted; Homing cannot open encrypted files yet]', media: [] });
  });

  it('keeps the message when its content is hostile or malformed: a bad field loses itself, a bad URI the offer', () => {
    const hostile = [
      { msgtype: 'm.image', body: 'x.png', url: 'mxc://evil.example/../../etc/passwd' },
      { msgtype: 'm.image', body: 'x.png', url: 'https://evil.example/x.png' },
      { msgtype: 'm.image', body: 'x.png', url: 'mxc://evil.example/abc?access_token=1' },
      { msgtype: 'm.image', body: 'x.png', url: 42 },
      { msgtype: 'm.image', body: 'x.png', url: `mxc://example.org/${'a'.repeat(300)}` },
      { msgtype: 'm.file', body: 7, url: ['mxc://example.org/abc'] },
    ];
    for (const content of hostile) expect(readMessage(event(content)), JSON.stringify(content).slice(0, 80)).toMatchObject({ kind: 'message', media: [] });
    const junk = readMessage(
      event({
        msgtype: 'm.file',
        body: 'caption',
        filename: 'evil\u202Egnp.exe\u0000',
        url: MXC,
        info: { mimetype: 'text/html<script>', size: -5, duration: 'long' },
        'org.matrix.msc3245.voice': 'yes',
      }),
    );
    expect(junk).toMatchObject({ kind: 'message', text: 'caption', media: [{ kind: 'document', source: MXC, name: 'evilgnp.exe' }] });
    if (junk.kind === 'message') {
      expect(junk.media[0]).not.toHaveProperty('mime');
      expect(junk.media[0]).not.toHaveProperty('size');
    }
    expect(readMessage(event({ msgtype: 'm.image', body: 'x.png', url: MXC, info: 'junk' }))).toMatchObject({ media: [{ kind: 'image', source: MXC }] });
    expect(readMessage(event({ msgtype: 'm.image', body: 'x.png', url: MXC, info: { size: 1e300 } }))).toMatchObject({ media: [{ kind: 'image' }] });
    expect(readMessage(event({ msgtype: 'm.image', body: 'x.png', url: MXC, filename: 'n'.repeat(5_000) }))).toMatchObject({ kind: 'message', media: [{ kind: 'image' }] });
  });

  it('reads an mxc URI only as `mxc://<server name>/<media id>` with safe characters', () => {
    expect(parseMxc('mxc://example.org/abc_DEF-123')).toEqual({ serverName: 'example.org', mediaId: 'abc_DEF-123' });
    expect(parseMxc('mxc://example.org:8448/abc')).toEqual({ serverName: 'example.org:8448', mediaId: 'abc' });
    expect(parseMxc('mxc://[::1]:8448/abc')).toEqual({ serverName: '[::1]:8448', mediaId: 'abc' });
    for (const bad of ['mxc://example.org/', 'mxc://example.org/a/b', 'mxc://example.org/a%2Fb', 'mxc://exa mple.org/a', 'mxc://example.org:99999/a', 'mxc://example.org/../a', 'mxc:///a', 'MXC://example.org/a', 'mxc://example.org/a\n']) {
      expect(parseMxc(bad), bad).toBeUndefined();
    }
  });
});
