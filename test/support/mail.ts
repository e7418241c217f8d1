/** Raw RFC 5322 messages for the email tests, as a person's mail program (or a robot) would write them. */

export interface MailParts {
  readonly from: string;
  readonly to: string;
  readonly subject?: string;
  readonly messageId: string;
  readonly inReplyTo?: string;
  readonly references?: readonly string[];
  /** Extra header lines, as written (`Auto-Submitted: auto-replied`). */
  readonly headers?: readonly string[];
  readonly text?: string;
  /** An HTML body instead of (or with) the text. */
  readonly html?: string;
  /** Files, base64-encoded (lines of 76, RFC 2045 §6.8), with `Content-Disposition: attachment` unless `inlineCid` makes one an unnamed inline part with that Content-ID. */
  readonly attachments?: readonly { readonly name: string; readonly type: string; readonly content: string | Buffer; readonly inlineCid?: string }[];
  readonly date?: Date;
}

export function rawMail(parts: MailParts): string {
  const head = [
    `From: ${parts.from}`,
    `To: ${parts.to}`,
    `Subject: ${parts.subject ?? 'Hello'}`,
    `Message-ID: ${parts.messageId}`,
    `Date: ${(parts.date ?? new Date()).toUTCString()}`,
    'MIME-Version: 1.0',
    ...(parts.inReplyTo ? [`In-Reply-To: ${parts.inReplyTo}`] : []),
    ...(parts.references && parts.references.length > 0 ? [`References: ${parts.references.join(' ')}`] : []),
    ...(parts.headers ?? []),
  ];
  const bodies: string[] = [];
  if (parts.text !== undefined) bodies.push(['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit', '', parts.text].join('\r\n'));
  if (parts.html !== undefined) bodies.push(['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: 8bit', '', parts.html].join('\r\n'));
  for (const file of parts.attachments ?? []) {
    bodies.push(
      [
        // An inline picture of an HTML mail is known by its Content-ID alone, as mail programs write it.
        ...(file.inlineCid
          ? [`Content-Type: ${file.type}`, 'Content-Disposition: inline', `Content-ID: <${file.inlineCid}>`]
          : [`Content-Type: ${file.type}; name="${file.name}"`, `Content-Disposition: attachment; filename="${file.name}"`]),
        'Content-Transfer-Encoding: base64',
        '',
        (Buffer.from(file.content).toString('base64').match(/.{1,76}/g) ?? []).join('\r\n'),
      ].join('\r\n'),
    );
  }
  if (bodies.length === 1 && !parts.attachments?.length) return `${head.join('\r\n')}\r\n${bodies[0]!}\r\n`;
  const boundary = 'homing-test-boundary';
  return [
    ...head,
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    ...bodies.flatMap((body) => [`--${boundary}`, body]),
    `--${boundary}--`,
    '',
  ].join('\r\n');
}
