/**
 * A file's type from its first bytes, for the types Homing treats specially:
 * images the agent may be shown (and the window may draw), audio it may
 * transcribe, PDFs it may read. A platform's declared type is a claim; only
 * these signatures make a file an image (SVG and HTML never are: they are
 * not sniffed, so they stay plain bytes).
 * Signatures: the WHATWG MIME Sniffing Standard (§6.1 images, §6.2 audio and
 * video), and ISO 32000 for `%PDF-`.
 */
const SIGNATURES: readonly { readonly mime: string; readonly test: (b: Uint8Array) => boolean }[] = [
  { mime: 'image/jpeg', test: (b) => starts(b, [0xff, 0xd8, 0xff]) },
  { mime: 'image/png', test: (b) => starts(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mime: 'image/gif', test: (b) => ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a') },
  { mime: 'image/webp', test: (b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBPVP') },
  { mime: 'application/pdf', test: (b) => ascii(b, 0, '%PDF-') },
  { mime: 'audio/ogg', test: (b) => ascii(b, 0, 'OggS\0') },
  { mime: 'audio/wav', test: (b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE') },
  { mime: 'audio/flac', test: (b) => ascii(b, 0, 'fLaC') },
  { mime: 'audio/mpeg', test: (b) => ascii(b, 0, 'ID3') || (b.length > 1 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0 && (b[1]! & 0x06) !== 0) },
  { mime: 'video/webm', test: (b) => starts(b, [0x1a, 0x45, 0xdf, 0xa3]) },
  { mime: 'video/mp4', test: (b) => ascii(b, 4, 'ftyp') && !ascii(b, 8, 'M4A') },
  { mime: 'audio/mp4', test: (b) => ascii(b, 4, 'ftypM4A') },
];

/** The type the bytes show, or undefined when they show none of the types above. */
export function sniffMime(head: Uint8Array): string | undefined {
  return SIGNATURES.find((signature) => signature.test(head))?.mime;
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'application/pdf': '.pdf',
  'audio/ogg': '.ogg',
  'audio/wav': '.wav',
  'audio/flac': '.flac',
  'audio/mpeg': '.mp3',
  'audio/mp4': '.m4a',
  'video/mp4': '.mp4',
  'video/webm': '.webm',
  'text/plain': '.txt',
  'text/markdown': '.md',
  'text/csv': '.csv',
  'application/json': '.json',
};

/**
 * The extension a file of this type is stored with (tools such as whisper-cli
 * go by it); `.bin` for anything else. Never one a browser or a desktop would
 * run or render as a page.
 */
export function extensionOf(mime: string): string {
  return EXTENSIONS[mime] ?? '.bin';
}

/** Whether the type is an image the agent can be shown (a sniffed one). */
export function isImageMime(mime: string): boolean {
  return mime === 'image/jpeg' || mime === 'image/png' || mime === 'image/gif' || mime === 'image/webp';
}

function starts(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((value, index) => bytes[index] === value);
}

function ascii(bytes: Uint8Array, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}
