/**
 * Job ids: random (version 4) UUIDs, as docs/api.md specifies, from the operating system's
 * cryptographic generator. `crypto.randomUUID()` returns its text as a chain of about twenty
 * joined pieces (some 600 bytes to collect per job, and the kept id had to be flattened);
 * this writes the 36 characters into a scratch buffer and reads them back as one flat string,
 * from a pool of random bytes refilled 256 ids at a time, as Node's own generator pools them
 * (docs/decisions.md, "Allocation on the hot path").
 */
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const POOL_IDS = 256;
const pool = Buffer.alloc(ID_BYTES * POOL_IDS);
let offset = pool.length;
const text = Buffer.alloc(36);
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** A new random UUID (RFC 9562 version 4), lowercase: `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`. */
export function newJobId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  let at = 0;
  for (let index = 0; index < ID_BYTES; index++) {
    let byte = pool[offset + index] as number;
    // The version (4) in the high nibble of byte 6, the variant (binary 10) atop byte 8.
    if (index === 6) byte = (byte & 0x0f) | 0x40;
    else if (index === 8) byte = (byte & 0x3f) | 0x80;
    if (index === 4 || index === 6 || index === 8 || index === 10) text[at++] = 0x2d;
    text[at++] = HEX[byte >> 4] as number;
    text[at++] = HEX[byte & 0x0f] as number;
  }
  offset += ID_BYTES;
  return text.toString('latin1', 0, 36);
}
