// Draws Homing's icons (a blue disc with a white house-shaped beacon) into
// resources/ as PNG, supersampled for smooth edges. Run: node scripts/make-icons.js
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

/** Shape in unit coordinates (0..1): 'disc', 'house' or null. */
function shape(u, v) {
  const dx = u - 0.5;
  const dy = v - 0.5;
  if (dx * dx + dy * dy > 0.25) return null;
  // A house: a roof triangle over a square body, centred.
  const inRoof = v >= 0.22 && v <= 0.48 && Math.abs(u - 0.5) <= (v - 0.22) * 1.15;
  const inBody = v > 0.46 && v <= 0.76 && Math.abs(u - 0.5) <= 0.2;
  const inDoor = v > 0.58 && v <= 0.76 && Math.abs(u - 0.5) <= 0.06;
  if ((inRoof || inBody) && !inDoor) return 'house';
  return 'disc';
}

function draw(size) {
  const samples = 4;
  return png(size, (x, y) => {
    let disc = 0;
    let house = 0;
    for (let sy = 0; sy < samples; sy++) {
      for (let sx = 0; sx < samples; sx++) {
        const kind = shape((x + (sx + 0.5) / samples) / size, (y + (sy + 0.5) / samples) / size);
        if (kind === 'disc') disc++;
        else if (kind === 'house') house++;
      }
    }
    const total = samples * samples;
    const alpha = (disc + house) / total;
    if (alpha === 0) return [0, 0, 0, 0];
    const w = house / (disc + house);
    const blue = [47, 111, 222];
    return [...blue.map((c) => Math.round(c * (1 - w) + 255 * w)), Math.round(alpha * 255)];
  });
}

const out = new URL('../resources/', import.meta.url);
for (const [name, size] of [
  ['tray.png', 16],
  ['tray@2x.png', 32],
  ['icon.png', 256],
]) {
  writeFileSync(new URL(name, out), draw(size));
}
