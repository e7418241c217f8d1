import { describe, expect, it } from 'vitest';
import { MAX_MEDIA_PER_MESSAGE } from '../../media/media';
import { attachmentOffers, attachmentSource, journaledOffer, parseAttachmentSource } from './attachments';

const ALICE = '22222222-2222-4222-8222-222222222222';
const GROUP = 'A'.repeat(43) + '=';

/** An entry of `dataMessage.attachments` as signal-cli writes it (JsonAttachment, nulls included). */
const attachment = (fields: Record<string, unknown>) => ({ contentType: 'image/jpeg', filename: null, id: 'b0kZQ9xQe3T1mNn4pLr8.jpg', size: 1234, width: 640, height: 480, caption: null, uploadTimestamp: 1700000000000, ...fields });

describe('Signal attachments as media offers', () => {
  it('offers a photo, a file, audio and video by their type, with name and declared size, sourced by id, size and chat', () => {
    const files = attachmentOffers(
      [
        attachment({}),
        attachment({ contentType: 'application/pdf', filename: 'report.pdf', id: 'x_1-Y.pdf', size: 99 }),
        attachment({ contentType: 'audio/aac', id: 'voice1.aac', size: 5 }),
        attachment({ contentType: 'video/mp4', filename: 'clip.mp4', id: 'v.mp4', size: null }),
      ],
      ALICE,
    );
    expect(files.offers).toEqual([
      { kind: 'image', source: `sg:b0kZQ9xQe3T1mNn4pLr8.jpg:1234:${ALICE}`, mime: 'image/jpeg', size: 1234 },
      { kind: 'document', source: `sg:x_1-Y.pdf:99:${ALICE}`, mime: 'application/pdf', name: 'report.pdf', size: 99 },
      { kind: 'audio', source: `sg:voice1.aac:5:${ALICE}`, mime: 'audio/aac', size: 5 },
      { kind: 'video', source: `sg:v.mp4::${ALICE}`, mime: 'video/mp4', name: 'clip.mp4' },
    ]);
    expect(files.labels).toEqual(['[photo]', '[document “report.pdf”]', '[audio]', '[video “clip.mp4”]']);
    expect(files.notes).toEqual([]);
  });

  it('takes a voice note flag where signal-cli gives one, and skips a long text’s attachment (its text is the body)', () => {
    const files = attachmentOffers([attachment({ contentType: 'audio/ogg; codecs=opus', id: 'n.ogg', voiceNote: true }), attachment({ contentType: 'text/x-signal-plain', id: 'long.txt' })], `group:${GROUP}`);
    expect(files.offers).toEqual([{ kind: 'voice', source: `sg:n.ogg:1234:group:${GROUP}`, mime: 'audio/ogg', size: 1234 }]);
  });

  it('names, instead of offering, what it cannot fetch: ids getAttachment could not serve, entries that are not objects, more than the limit', () => {
    const hostile = ['../../etc/passwd', 'a/b.jpg', 'with space.jpg', '', 'é.jpg', 'x'.repeat(300), 42, null];
    const files = attachmentOffers([...hostile.map((id) => attachment({ id, filename: 'p\u202e.jpg' })), 'not an object', [1]], ALICE);
    expect(files.offers).toEqual([]);
    expect(files.notes).toHaveLength(hostile.length + 2);
    expect(files.notes[0]).toBe('[image “p.jpg”: Homing cannot fetch it]');
    expect(files.notes.at(-1)).toBe('[document: Homing cannot fetch it]');
    const many = attachmentOffers(Array.from({ length: MAX_MEDIA_PER_MESSAGE + 2 }, (_, i) => attachment({ id: `f${i}.jpg` })), ALICE);
    expect([many.offers.length, many.notes.length]).toEqual([MAX_MEDIA_PER_MESSAGE, 2]);
  });

  it('keeps bad field values out without losing the file, and takes captions', () => {
    const files = attachmentOffers([attachment({ contentType: '<script>', size: -5, filename: '\u0000\u200b', caption: 'the garden' })], ALICE);
    expect(files.offers).toEqual([{ kind: 'document', source: `sg:b0kZQ9xQe3T1mNn4pLr8.jpg::${ALICE}` }]);
    expect(files.captions).toEqual(['the garden']);
  });

  it('reads a source back only when its id, size and chat are all usable', () => {
    expect(parseAttachmentSource(attachmentSource('a.jpg', 12, ALICE))).toEqual({ id: 'a.jpg', size: 12, place: { recipient: ALICE } });
    expect(parseAttachmentSource(attachmentSource('a.jpg', undefined, `group:${GROUP}`))).toEqual({ id: 'a.jpg', size: undefined, place: { groupId: GROUP } });
    expect(parseAttachmentSource('sg:a.jpg:12:+15550000002')).toMatchObject({ place: { recipient: '+15550000002' } });
    for (const bad of ['a.jpg', 'sg:../x:1:' + ALICE, 'sg:a.jpg:1:somebody', 'sg:a b:1:' + ALICE, 'sg:a.jpg:-1:' + ALICE, 'dc:1:2:3:https://x']) expect(parseAttachmentSource(bad)).toBeUndefined();
  });

  it('reads back a journaled offer with the same bounds, and drops one that does not read', () => {
    const offer = { kind: 'image', source: `sg:a.jpg:3:${ALICE}`, mime: 'image/jpeg', name: 'a.jpg', size: 3 };
    expect(journaledOffer(offer)).toEqual(offer);
    expect(journaledOffer({ ...offer, kind: 'sticker' })).toBeUndefined();
    expect(journaledOffer({ ...offer, source: '/etc/passwd' })).toBeUndefined();
    expect(journaledOffer({ ...offer, size: 'big', mime: 'not a type' })).toEqual({ kind: 'image', source: offer.source, name: 'a.jpg' });
    expect(journaledOffer('nope')).toBeUndefined();
  });
});
