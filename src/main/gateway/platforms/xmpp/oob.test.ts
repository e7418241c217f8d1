import { xml } from '@xmpp/client';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MEDIA_NAME } from '../../media/media';
import { decideMessage, type InboundContext } from './inbound';
import { MAX_OOB_URL, NS_OOB, oobFile } from './oob';

const ROOM = 'lab@conference.example.org';
const context: InboundContext = { self: 'homing@example.org', roomNick: (room) => (room === ROOM ? 'homing' : undefined), everyMessage: () => false, isOwnId: () => false };
/** As prosody's mod_http_file_share hands out GET URLs: `/file_share/<slot>/<name>`. */
const URL_ = 'https://upload.example.org/file_share/3c0a2f5e-55f1/sunset.jpg';
const oob = (url: string) => xml('x', { xmlns: NS_OOB }, xml('url', {}, url));
const chat = (body: string | undefined, ...children: ReturnType<typeof xml>[]) =>
  xml('message', { from: 'alice@example.org/phone', type: 'chat', id: 'm1' }, ...(body !== undefined ? [xml('body', {}, body)] : []), ...children);

describe('XEP-0066 files in XMPP messages', () => {
  it('offers the file of a message whose body is just its URL (as Conversations sends it), said as [file: name]', () => {
    expect(decideMessage(chat(URL_, oob(URL_)), context)).toEqual({
      kind: 'direct',
      from: 'alice@example.org',
      resource: 'phone',
      text: '[file: sunset.jpg]',
      media: [{ kind: 'image', source: URL_, mime: 'image/jpeg', name: 'sunset.jpg' }],
      id: 'm1',
      delayed: false,
    });
  });

  it('keeps a body that says more than the URL, and takes a file without a body', () => {
    expect(decideMessage(chat('the report', oob(URL_)), context)).toMatchObject({ text: 'the report\n[file: sunset.jpg]' });
    expect(decideMessage(chat(undefined, oob(URL_)), context)).toMatchObject({ kind: 'direct', text: '[file: sunset.jpg]' });
    expect(decideMessage(chat('  ', oob(URL_)), context)).toMatchObject({ kind: 'direct', text: '[file: sunset.jpg]' });
  });

  it('in a room takes a file only when addressed (or where every message is answered)', () => {
    const inRoom = (body: string) => xml('message', { from: `${ROOM}/bob`, type: 'groupchat', id: 'g1' }, xml('body', {}, body), oob(URL_));
    expect(decideMessage(inRoom(URL_), context)).toEqual({ kind: 'ignore', why: 'not addressed to us' });
    expect(decideMessage(inRoom(`homing: ${URL_}`), context)).toMatchObject({ kind: 'room', text: '[file: sunset.jpg]', media: [{ kind: 'image' }] });
    expect(decideMessage(inRoom(URL_), { ...context, everyMessage: () => true })).toMatchObject({ kind: 'room', text: '[file: sunset.jpg]' });
  });

  it('tells voice notes, audio, video and documents apart by extension, with a decoded name', () => {
    const kind = (url: string) => oobFile(chat(url, oob(url)))?.offer;
    expect(kind('https://h/file_share/x/Voice%20message.oga')).toEqual({ kind: 'voice', source: 'https://h/file_share/x/Voice%20message.oga', mime: 'audio/ogg', name: 'Voice message.oga' });
    expect(kind('https://h/a/song.MP3')).toMatchObject({ kind: 'audio', mime: 'audio/mpeg' });
    expect(kind('https://h/a/clip.mp4')).toMatchObject({ kind: 'video' });
    expect(kind('https://h/a/notes.pdf')).toMatchObject({ kind: 'document', mime: 'application/pdf' });
    expect(kind('https://h/a/archive.zip')).toEqual({ kind: 'document', source: 'https://h/a/archive.zip', name: 'archive.zip' });
    expect(kind('https://h/')).toEqual({ kind: 'document', source: 'https://h/' });
    expect(kind('https://h/a/%E2%80%AEgpj.exe')).toMatchObject({ name: 'gpj.exe' });
    expect(kind('https://h/a/%ZZ.png')).toMatchObject({ kind: 'image', name: '%ZZ.png' });
    expect([...kind(`https://h/a/${'é'.repeat(MAX_MEDIA_NAME + 20)}.png`)!.name!]).toHaveLength(MAX_MEDIA_NAME);
  });

  it('offers nothing for a URL that is not http(s), carries credentials, is too long, or is no URL', () => {
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'ftp://h/a.png', 'data:image/png;base64,AAAA', 'aesgcm://h/a.png#key', 'https://user:pw@h/a.png', `https://h/${'a'.repeat(MAX_OOB_URL)}.png`, 'not a url', '']) {
      expect(oobFile(chat(bad, oob(bad))), bad).toBeUndefined();
      expect(decideMessage(chat(bad, oob(bad)), context), bad).not.toHaveProperty('media');
    }
    // No body and nothing usable: nothing to take.
    expect(decideMessage(chat(undefined, oob('file:///etc/passwd')), context).kind).toBe('ignore');
    // A second OOB element is read when the first is unusable; an OOB without <url> is skipped.
    expect(oobFile(chat(URL_, xml('x', { xmlns: NS_OOB }), oob('ftp://x'), oob(URL_)))?.offer.source).toBe(URL_);
  });

  it('property: whatever the OOB element holds, the message is decided and any offer is an http(s) URL within bounds', () => {
    fc.assert(
      fc.property(fc.oneof(fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.string({ maxLength: 300 }), fc.constant(URL_)), fc.option(fc.string({ maxLength: 100 })), (url, body) => {
        const decided = decideMessage(chat(body ?? undefined, oob(url)), context);
        if (decided.kind !== 'direct' || !decided.media) return;
        const source = new URL(decided.media[0]!.source);
        expect(['http:', 'https:']).toContain(source.protocol);
        expect(decided.media[0]!.source.length).toBeLessThanOrEqual(MAX_OOB_URL);
      }),
      { numRuns: 500 },
    );
  });
});
