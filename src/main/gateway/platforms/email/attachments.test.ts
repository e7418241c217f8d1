import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { kindOf, mailFiles, mailFileSource, parseMailFileSource } from './attachments';

function multipart(parts: string[], type = 'multipart/mixed'): string {
  return [
    'From: alice@example.org',
    'To: agent@test.local',
    'Subject: files',
    'Message-ID: <files@example.org>',
    'MIME-Version: 1.0',
    `Content-Type: ${type}; boundary="b"`,
    '',
    ...parts.flatMap((part) => ['--b', part]),
    '--b--',
    '',
  ].join('\r\n');
}

const text = ['Content-Type: text/plain; charset=utf-8', '', 'see the files'].join('\r\n');
const part = (headers: string[], content: string) => [...headers, 'Content-Transfer-Encoding: base64', '', Buffer.from(content).toString('base64')].join('\r\n');

describe('email attachments as media', () => {
  it('offers attached files, inline images with a Content-ID and named inline parts; not unnamed inline decoration', async () => {
    const parsed = await simpleParser(
      multipart([
        text,
        part(['Content-Type: image/jpeg', 'Content-Disposition: attachment; filename="plant.jpg"'], 'jpeg bytes'),
        part(['Content-Type: image/png', 'Content-Disposition: inline', 'Content-ID: <logo@x>'], 'png bytes'),
        part(['Content-Type: application/pdf; name="report.pdf"', 'Content-Disposition: inline; filename="report.pdf"'], '%PDF-1.4'),
        part(['Content-Type: application/octet-stream', 'Content-Disposition: inline'], 'decoration'),
        part(['Content-Type: audio/ogg', 'Content-Disposition: attachment; filename="memo.ogg"'], 'ogg'),
        part(['Content-Type: video/mp4; name="clip.mp4"'], 'mp4'),
      ]),
    );
    const { offered, beyond } = mailFiles(parsed.attachments);
    expect(beyond).toEqual([]);
    expect(offered.map((file) => [file.kind, file.mime, file.name, file.size])).toEqual([
      ['image', 'image/jpeg', 'plant.jpg', 10],
      ['image', 'image/png', undefined, 9],
      ['document', 'application/pdf', 'report.pdf', 8],
      ['audio', 'audio/ogg', 'memo.ogg', 3],
      ['video', 'video/mp4', 'clip.mp4', 3],
    ]);
    // The index is the file's place in the parser's list: the decoration (index 3) is skipped, not renumbered.
    expect(offered.map((file) => file.index)).toEqual([0, 1, 2, 4, 5]);
  });

  it('takes the names the parser decoded from RFC 2231 and RFC 2047', async () => {
    const parsed = await simpleParser(
      multipart([
        text,
        part(['Content-Type: text/plain', "Content-Disposition: attachment; filename*=utf-8''Notizen%20f%C3%BCr%20M%C3%A4rz.txt"], 'notes'),
        part(['Content-Type: application/pdf', 'Content-Disposition: attachment; filename="=?utf-8?B?w6l0w6kucGRm?="'], '%PDF'),
      ]),
    );
    expect(mailFiles(parsed.attachments).offered.map((file) => file.name)).toEqual(['Notizen für März.txt', 'été.pdf']);
  });

  it('keeps a name to one visible line of at most 200 characters', async () => {
    const parsed = await simpleParser(
      multipart([text, part(['Content-Type: application/pdf', `Content-Disposition: attachment; filename="\u202eevil\u0007 ${'x'.repeat(1_000)}.pdf"`], '%PDF')]),
    );
    const [file] = mailFiles(parsed.attachments).offered;
    expect([...file!.name!]).toHaveLength(200);
    expect(file!.name).toMatch(/^evil x+…$/);
  });

  it('offers at most ten files of one mail and names the rest', async () => {
    const parsed = await simpleParser(multipart([text, ...Array.from({ length: 13 }, (_, i) => part(['Content-Type: application/pdf', `Content-Disposition: attachment; filename="f${i}.pdf"`], `%PDF ${i}`))]));
    const { offered, beyond } = mailFiles(parsed.attachments);
    expect(offered).toHaveLength(10);
    expect(beyond.map((file) => file.name)).toEqual(['f10.pdf', 'f11.pdf', 'f12.pdf']);
  });

  it('kinds by declared type: four image types are images, other images documents', () => {
    expect(['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/heic', 'image/svg+xml', 'audio/mpeg', 'video/webm', 'text/plain', 'Image/JPEG; x=y'].map(kindOf)).toEqual([
      'image',
      'image',
      'image',
      'image',
      'document',
      'document',
      'audio',
      'video',
      'document',
      'image',
    ]);
  });

  it('writes a locator that reads back, whatever the folder is called', () => {
    for (const folder of ['INBOX', 'Archive/2026', 'Fächer/100% wichtig', 'a b']) {
      const locator = { folder, uidValidity: 4_294_967_295, uid: 17, index: 3 };
      expect(parseMailFileSource(mailFileSource(locator))).toEqual(locator);
    }
    expect(mailFileSource({ folder: 'Archive/2026', uidValidity: 1, uid: 2, index: 0 })).toBe('Archive%2F2026/1/2/0');
  });

  it('refuses a locator it did not write', () => {
    for (const source of [
      '',
      'INBOX/1/2',
      'INBOX/1/2/3/4',
      'INBOX/0/2/3',
      'INBOX/1/0/3',
      'INBOX/01/2/3',
      'INBOX/4294967296/2/3',
      'INBOX/1/4294967296/3',
      'INBOX/1/2/10000',
      'INBOX/1/2/-1',
      'INBOX/1/2/03',
      '%ZZ/1/2/3',
      '%0D%0A/1/2/3',
      'IN%42OX/1/2/3',
      'a b/1/2/3',
      `${'x'.repeat(501)}/1/2/3`,
      'https://example.org/file.jpg',
    ]) {
      expect(parseMailFileSource(source), source).toBeUndefined();
    }
  });
});
