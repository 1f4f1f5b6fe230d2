// A minimal RGB canvas and PNG writer (zlib from node, CRC-32 by hand), with a 3×5 pixel font:
// enough to draw the learning curves without a plotting dependency.

import { deflateSync } from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

// Each glyph: five rows of three pixels, top row first.
const FONT = {
  0: '111101101101111',
  1: '010110010010111',
  2: '111001111100111',
  3: '111001111001111',
  4: '101101111001001',
  5: '111100111001111',
  6: '111100111101111',
  7: '111001001010010',
  8: '111101111101111',
  9: '111101111001111',
  A: '010101111101101',
  B: '110101110101110',
  C: '011100100100011',
  D: '110101101101110',
  E: '111100110100111',
  F: '111100110100100',
  G: '011100101101011',
  H: '101101111101101',
  I: '111010010010111',
  J: '001001001101010',
  K: '101101110101101',
  L: '100100100100111',
  M: '101111111101101',
  N: '110101101101101',
  O: '010101101101010',
  P: '110101110100100',
  Q: '010101101110011',
  R: '110101110101101',
  S: '011100010001110',
  T: '111010010010010',
  U: '101101101101111',
  V: '101101101101010',
  W: '101101111111101',
  X: '101101010101101',
  Y: '101101010010010',
  Z: '111001010100111',
  '%': '101001010100101',
  '.': '000000000000010',
  ',': '000000000010100',
  '-': '000000111000000',
  ':': '000010000010000',
  '(': '010100100100010',
  ')': '010001001001010',
  '/': '001001010100100',
  '=': '000111000111000',
  '+': '000010111010000',
  '>': '100010001010100',
  '<': '001010100010001',
  ' ': '000000000000000',
};

export class Canvas {
  constructor(width, height, background = [255, 255, 255]) {
    this.width = width;
    this.height = height;
    this.pixels = Buffer.alloc(width * height * 3);
    this.rect(0, 0, width, height, background);
  }

  set(x, y, [r, g, b]) {
    x = Math.round(x);
    y = Math.round(y);
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    const i = (y * this.width + x) * 3;
    this.pixels[i] = r;
    this.pixels[i + 1] = g;
    this.pixels[i + 2] = b;
  }

  rect(x, y, w, h, color) {
    for (let j = 0; j < h; j++) for (let i = 0; i < w; i++) this.set(x + i, y + j, color);
  }

  /** A straight line `thickness` pixels wide; with `dash`, drawn `dash` pixels on, `dash` off. */
  line(x0, y0, x1, y1, color, thickness = 1, dash = 0) {
    const steps = Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0), 1);
    const half = Math.floor(thickness / 2);
    for (let s = 0; s <= steps; s++) {
      if (dash && Math.floor(s / dash) % 2 === 1) continue;
      const x = x0 + ((x1 - x0) * s) / steps;
      const y = y0 + ((y1 - y0) * s) / steps;
      this.rect(Math.round(x) - half, Math.round(y) - half, thickness, thickness, color);
    }
  }

  /** Upper-case text in the 3×5 font, each font pixel `scale` pixels square. Returns the width drawn. */
  text(x, y, string, color, scale = 2) {
    let cx = x;
    for (const ch of string.toUpperCase()) {
      const glyph = FONT[ch] ?? FONT[' '];
      for (let row = 0; row < 5; row++)
        for (let col = 0; col < 3; col++)
          if (glyph[row * 3 + col] === '1') this.rect(cx + col * scale, y + row * scale, scale, scale, color);
      cx += 4 * scale;
    }
    return cx - x;
  }

  png() {
    const header = Buffer.alloc(13);
    header.writeUInt32BE(this.width, 0);
    header.writeUInt32BE(this.height, 4);
    header[8] = 8; // bit depth
    header[9] = 2; // colour type: RGB
    const stride = this.width * 3;
    const raw = Buffer.alloc((stride + 1) * this.height); // each row: filter byte 0, then the pixels
    for (let y = 0; y < this.height; y++) this.pixels.copy(raw, y * (stride + 1) + 1, y * stride, (y + 1) * stride);
    const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
  }
}
