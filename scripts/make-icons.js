// Draws Homing's icons into resources/ as PNG: the app icon (a blue disc with a
// white house), the tray's state icons at 1x (16 px) and 2x (32 px) with the owed
// count drawn pixel-aligned, and macOS template images. Run: node scripts/make-icons.js
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buffer) {
  let crc = 0xffffffff;
  for (const byte of buffer) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'ascii');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
function png(size, pixel) {
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) raw.set(pixel(x, y), y * (size * 4 + 1) + 1 + x * 4);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Is (u, v), in unit coordinates (0..1), inside the house (roof over a body, with a door)? */
function inHouse(u, v) {
  const inRoof = v >= 0.22 && v <= 0.48 && Math.abs(u - 0.5) <= (v - 0.22) * 1.15;
  const inBody = v > 0.46 && v <= 0.76 && Math.abs(u - 0.5) <= 0.2;
  const inDoor = v > 0.58 && v <= 0.76 && Math.abs(u - 0.5) <= 0.06;
  return (inRoof || inBody) && !inDoor;
}

function inCircle(u, v, cu, cv, r) {
  return (u - cu) ** 2 + (v - cv) ** 2 <= r * r;
}

/**
 * Draws a size×size icon: `paint(u, v)` gives the RGBA colour of a point (or
 * null for transparent), supersampled 4×4 for smooth edges; then `overlay`
 * paints pixel-aligned glyphs on top, so digits stay crisp at 16 px.
 */
function draw(size, paint, overlay = () => undefined) {
  const samples = 4;
  const pixels = Array.from({ length: size * size }, (_, index) => {
    const x = index % size;
    const y = Math.floor(index / size);
    let r = 0;
    let g = 0;
    let b = 0;
    let a = 0;
    for (let sy = 0; sy < samples; sy++) {
      for (let sx = 0; sx < samples; sx++) {
        const colour = paint((x + (sx + 0.5) / samples) / size, (y + (sy + 0.5) / samples) / size);
        if (!colour) continue;
        const alpha = (colour[3] ?? 255) / 255;
        r += colour[0] * alpha;
        g += colour[1] * alpha;
        b += colour[2] * alpha;
        a += alpha;
      }
    }
    if (a === 0) return [0, 0, 0, 0];
    return [Math.round(r / a), Math.round(g / a), Math.round(b / a), Math.round((a / (samples * samples)) * 255)];
  });
  overlay((x, y, colour) => {
    if (x >= 0 && y >= 0 && x < size && y < size) pixels[y * size + x] = colour;
  });
  return png(size, (x, y) => pixels[y * size + x]);
}

// A 3×5 pixel font for the counts and the attention mark.
const GLYPHS = {
  1: ['.#.', '##.', '.#.', '.#.', '###'],
  2: ['##.', '..#', '.#.', '#..', '###'],
  3: ['##.', '..#', '.#.', '..#', '##.'],
  4: ['#.#', '#.#', '###', '..#', '..#'],
  5: ['###', '#..', '##.', '..#', '##.'],
  6: ['.##', '#..', '###', '#.#', '###'],
  7: ['###', '..#', '.#.', '.#.', '.#.'],
  8: ['###', '#.#', '###', '#.#', '###'],
  9: ['###', '#.#', '###', '..#', '##.'],
  '+': ['...', '.#.', '###', '.#.', '...'],
  '!': ['.#.', '.#.', '.#.', '...', '.#.'],
};

/** Paints `text` centred, each font pixel `scale` device pixels (2 at 16 px, 4 at 32 px). */
function glyphs(size, text, colour) {
  return (set) => {
    const scale = size / 8;
    const cell = text.length > 1 ? Math.max(1, Math.floor(scale * 0.75)) : scale;
    const width = (text.length * 4 - 1) * cell;
    const left = Math.floor((size - width) / 2);
    const top = Math.floor((size - 5 * cell) / 2);
    [...text].forEach((char, index) => {
      GLYPHS[char].forEach((row, gy) => {
        [...row].forEach((on, gx) => {
          if (on !== '#') return;
          for (let dy = 0; dy < cell; dy++) {
            for (let dx = 0; dx < cell; dx++) set(left + (index * 4 + gx) * cell + dx, top + gy * cell + dy, colour);
          }
        });
      });
    });
  };
}

const WHITE = [255, 255, 255, 255];
const BLACK = [0, 0, 0, 255];
// The tray's states (see README "The tray app"): the disc's colour says which.
const COLOURS = {
  idle: [47, 111, 222], // all replies delivered
  working: [22, 150, 120], // the agent is answering, or a reply is being sent
  owed: [226, 120, 20], // replies owed: the count is drawn in
  attention: [205, 40, 40], // a failure needs the user
  off: [130, 130, 130], // the gateway is starting, restarting, stopped or paused
};

function disc(colour, inner) {
  return (u, v) => {
    if (!inCircle(u, v, 0.5, 0.5, 0.5)) return null;
    return inner?.(u, v) ? WHITE : [...colour, 255];
  };
}

// macOS template images: black with alpha only; the menu bar tints them.
const TEMPLATES = {
  idle: (u, v) => (inHouse(u, v) ? BLACK : null),
  working: (u, v) => (inHouse(u, v) || inCircle(u, v, 0.84, 0.84, 0.13) ? BLACK : null),
  owed: (u, v) => (inHouse(u, v) || inCircle(u, v, 0.82, 0.2, 0.17) ? BLACK : null),
  attention: (u, v) => (inCircle(u, v, 0.5, 0.5, 0.5) ? BLACK : null),
  off: (u, v) => (inHouse(u, v) ? [0, 0, 0, 110] : null),
};

function iconSet(size) {
  const set = {
    'tray-idle': draw(size, disc(COLOURS.idle, inHouse)),
    'tray-working': draw(size, disc(COLOURS.working, inHouse)),
    'tray-off': draw(size, disc(COLOURS.off, inHouse)),
    'tray-attention': draw(size, disc(COLOURS.attention), glyphs(size, '!', WHITE)),
  };
  for (const count of ['1', '2', '3', '4', '5', '6', '7', '8', '9', '9+']) {
    set[`tray-owed-${count === '9+' ? '9plus' : count}`] = draw(size, disc(COLOURS.owed), glyphs(size, count, WHITE));
  }
  for (const [kind, paint] of Object.entries(TEMPLATES)) {
    // The attention template is a disc with the "!" cut out.
    const overlay = kind === 'attention' ? glyphs(size, '!', [0, 0, 0, 0]) : undefined;
    set[`tray-${kind}Template`] = draw(size, paint, overlay);
  }
  return set;
}

const out = new URL('../resources/', import.meta.url);
for (const [suffix, size] of [
  ['', 16],
  ['@2x', 32],
]) {
  for (const [name, data] of Object.entries(iconSet(size))) writeFileSync(new URL(`${name}${suffix}.png`, out), data);
}
writeFileSync(new URL('icon.png', out), draw(256, disc(COLOURS.idle, inHouse)));
