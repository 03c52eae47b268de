// sha256 of a byte range of an open file, read synchronously with one buffer (page-cache reads beat the busy libuv pool).
import crypto from "node:crypto";
import fs from "node:fs";

const CHUNK = 1024 * 1024;

/** The sha256 (hex) of bytes [start, start+length) of `fd`, and how many of them could be read. */
export function sha256OfRange(fd: number, start: number, length: number): { sha256: string; bytes: number } {
  const hash = crypto.createHash("sha256");
  const buf = Buffer.allocUnsafe(Math.max(1, Math.min(length, CHUNK)));
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, 0, Math.min(buf.length, length - done), start + done);
    if (n === 0) break;
    hash.update(buf.subarray(0, n));
    done += n;
  }
  return { sha256: hash.digest("hex"), bytes: done };
}
