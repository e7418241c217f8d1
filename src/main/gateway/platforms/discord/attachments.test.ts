import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MEDIA_NAME, MAX_MEDIA_PER_MESSAGE } from '../../media/media';
import { attachmentOffers, attachmentSource, IS_VOICE_MESSAGE, linkExpiry, mediaUrlAllowed, parseAttachmentSource } from './attachments';
import { parseMessageCreate } from './inbound';

const API = 'https://discord.com/api';
const CHANNEL = '1012345678900020080';
const MESSAGE = '1100000000000000001';
/** The shape of docs reference.mdx's example attachment URL. */
const url = (id: string, name = 'my_image.png') => `https://cdn.discordapp.com/attachments/${CHANNEL}/${id}/${name}?ex=65d903de&is=65c68ede&hm=2481f30dd67f503f54d020ae3b5533b9987fae4e55f2b4e3926e08a3fa3ee24f&`;
const file = (extra: Record<string, unknown> = {}) => ({ id: '1234567891233211234', filename: 'my_image.png', size: 5_000, url: url('1234567891233211234'), proxy_url: 'https://media.discordapp.net/x', content_type: 'image/png', ...extra });
const offers = (attachments: unknown[], flags = 0) => attachmentOffers(attachments, { channelId: CHANNEL, messageId: MESSAGE, flags }, API);
const source = (id = '1234567891233211234', name?: string) => attachmentSource({ channelId: CHANNEL, messageId: MESSAGE, attachmentId: id, url: url(id, name) });

describe('Discord attachments as media offers', () => {
  it('offers an image with its type, name and size, naming its message beside the link', () => {
    expect(offers([file()])).toEqual([{ kind: 'image', source: source(), mime: 'image/png', name: 'my_image.png', size: 5_000 }]);
    expect(parseAttachmentSource(source())).toEqual({ channelId: CHANNEL, messageId: MESSAGE, attachmentId: '1234567891233211234', url: url('1234567891233211234') });
  });

  it('takes a voice message (IS_VOICE_MESSAGE, audio) as a voice note with its duration, and other audio as audio', () => {
    const voice = file({ filename: 'voice-message.ogg', content_type: 'audio/ogg; codecs=opus', duration_secs: 3.5, waveform: 'AAAA', url: url('1234567891233211234', 'voice-message.ogg') });
    expect(offers([voice], IS_VOICE_MESSAGE)).toEqual([{ kind: 'voice', source: source('1234567891233211234', 'voice-message.ogg'), mime: 'audio/ogg', name: 'voice-message.ogg', size: 5_000, durationS: 3.5 }]);
    expect(offers([voice])[0]).toMatchObject({ kind: 'audio', durationS: 3.5 });
    // The flag makes a voice note only of audio (docs: its Content-Type "must begin with audio/").
    expect(offers([file()], IS_VOICE_MESSAGE)[0]?.kind).toBe('image');
  });

  it('tells images, video, documents and SVG apart by type, and by extension when Discord gives none', () => {
    expect(offers([file({ content_type: 'video/mp4', filename: 'a.mp4' })])[0]?.kind).toBe('video');
    expect(offers([file({ content_type: 'application/pdf', filename: 'a.pdf' })])[0]?.kind).toBe('document');
    expect(offers([file({ content_type: 'image/svg+xml', filename: 'a.svg' })])[0]?.kind).toBe('document');
    expect(offers([file({ content_type: undefined, filename: 'photo.JPG' })])[0]).toMatchObject({ kind: 'image' });
    expect(offers([file({ content_type: undefined, filename: 'notes' })])[0]).toMatchObject({ kind: 'document' });
    // `title` keeps the original name where `filename` was sanitised (docs message.mdx, Attachment Object).
    expect(offers([file({ title: 'Отчёт.pdf', filename: 'report.pdf', content_type: 'application/pdf' })])[0]?.name).toBe('Отчёт.pdf');
  });

  it('offers nothing for a link off Discord’s CDN (or with credentials, or not https), but the fake’s own API origin', () => {
    for (const bad of ['https://evil.example/attachments/1/2/x.png', 'http://cdn.discordapp.com/attachments/1/2/x.png', 'https://cdn.discordapp.com:8443/a', 'https://u:p@cdn.discordapp.com/a', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url']) {
      expect(offers([file({ url: bad })]), bad).toEqual([]);
      expect(mediaUrlAllowed(bad, API), bad).toBe(false);
    }
    expect(mediaUrlAllowed('https://media.discordapp.net/attachments/1/2/x.png', API)).toBe(true);
    expect(mediaUrlAllowed('http://127.0.0.1:4000/attachments/1/2/x.png', 'http://127.0.0.1:4000/api')).toBe(true);
    expect(mediaUrlAllowed('http://127.0.0.1:4001/attachments/1/2/x.png', 'http://127.0.0.1:4000/api')).toBe(false);
  });

  it('drops a malformed attachment, or its bad detail, and keeps the rest of the message', () => {
    expect(offers([null, 7, 'x', { id: 'nope', url: url('1') }, { id: '1' }, file()])).toHaveLength(1);
    for (const size of [-1, 1.5, 2 ** 60, '10', null]) expect(offers([file({ size })])[0], String(size)).not.toHaveProperty('size');
    for (const type of ['image', '../../etc', 'a'.repeat(300) + '/x', 7]) expect(offers([file({ content_type: type })])[0], String(type)).not.toHaveProperty('mime');
    expect(offers([file({ duration_secs: -1, content_type: 'audio/ogg' })])[0]).not.toHaveProperty('durationS');
    expect(offers([file({ url: url('1') + 'x'.repeat(3000) })])).toEqual([]);
    expect(offers([file({ filename: 'report\u0000\n\u202Efdp.exe' })])[0]?.name).toBe('reportfdp.exe');
    expect(offers([file({ filename: ' \u0007 ' })])[0]).not.toHaveProperty('name');
    expect([...offers([file({ filename: '😀'.repeat(MAX_MEDIA_NAME + 5) })])[0]!.name!]).toHaveLength(MAX_MEDIA_NAME);
    expect(offers(Array.from({ length: 30 }, () => file()))).toHaveLength(MAX_MEDIA_PER_MESSAGE);
  });

  it('reads a message with files as a message (a broken attachment list or flags never lose it)', () => {
    const base = { id: MESSAGE, channel_id: CHANNEL, author: { id: '1100000000000000003', username: 'alice' }, content: 'look', type: 0 };
    const parsed = parseMessageCreate({ ...base, attachments: [file(), { junk: true }], flags: 'x' }, '1', API);
    expect(parsed).toMatchObject({ kind: 'message', message: { text: 'look\n[attachment: my_image.png]\n[attachment]', media: [{ kind: 'image' }] } });
    const voice = parseMessageCreate({ ...base, content: '', flags: IS_VOICE_MESSAGE, attachments: [file({ content_type: 'audio/ogg', filename: 'voice-message.ogg' })] }, '1', API);
    expect(voice).toMatchObject({ kind: 'message', message: { text: '[attachment: voice-message.ogg]', media: [{ kind: 'voice' }] } });
  });

  it('reads a link’s expiry from its hex `ex`, and nothing from a link without one', () => {
    expect(linkExpiry(url('1'))).toBe(0x65d903de * 1000);
    expect(linkExpiry('https://cdn.discordapp.com/a?ex=zz')).toBeUndefined();
    expect(linkExpiry('https://cdn.discordapp.com/a')).toBeUndefined();
  });

  it('refuses a source that is not one of its own', () => {
    for (const bad of ['', 'dc:1:2:3:', 'dc:1:2:x:https://cdn.discordapp.com/a', 'dc:1:2:3:ftp://x', `dc:1:2:3:https://a/${'x'.repeat(3000)}`, 'dc:1:2:3:https://a b']) expect(parseAttachmentSource(bad), bad).toBeUndefined();
  });

  it('property: whatever the attachments hold, the message is read and every offer names an allowed link', () => {
    const attachment = fc.record(
      {
        id: fc.oneof(fc.constant('1234567891233211234'), fc.string({ maxLength: 25 }), fc.jsonValue()),
        url: fc.oneof(fc.constant(url('1')), fc.webUrl(), fc.string({ maxLength: 50 }), fc.jsonValue()),
        filename: fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue()),
        size: fc.oneof(fc.integer(), fc.double(), fc.jsonValue()),
        content_type: fc.oneof(fc.constantFrom('image/png', 'audio/ogg', 'video/mp4'), fc.string({ maxLength: 20 }), fc.jsonValue()),
        duration_secs: fc.oneof(fc.double(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(attachment, fc.jsonValue()), { maxLength: 12 }), fc.oneof(fc.integer(), fc.jsonValue()), (attachments, flags) => {
        const parsed = parseMessageCreate({ id: MESSAGE, channel_id: CHANNEL, author: { id: '3' }, content: 'see', attachments, flags }, '1', API);
        expect(parsed.kind).toBe('message');
        if (parsed.kind !== 'message') return;
        expect(parsed.message.media.length).toBeLessThanOrEqual(MAX_MEDIA_PER_MESSAGE);
        for (const offer of parsed.message.media) {
          const where = parseAttachmentSource(offer.source);
          expect(where && mediaUrlAllowed(where.url, API)).toBe(true);
          if (offer.size !== undefined) expect(Number.isSafeInteger(offer.size) && offer.size >= 0).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
