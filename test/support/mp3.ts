// A strict MPEG audio Layer III frame walker for tests: every byte of the buffer must belong to a valid
// frame header's frame (after an optional ID3v2 tag), so a stream with a truncated frame, stray bytes or
// a bad header fails loudly with its offset. Its tables are written out here again, not imported from the
// simulator's audio.ts, so a wrong table there cannot also make this parser agree with it.

const MPEG1_L3_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0];
const MPEG2_L3_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0];
/** Sample rates by the header's 2-bit version (0 MPEG-2.5, 1 reserved, 2 MPEG-2, 3 MPEG-1) and rate index. */
const SAMPLE_RATES: Record<number, readonly number[]> = {
  0: [11025, 12000, 8000],
  2: [22050, 24000, 16000],
  3: [44100, 48000, 32000],
};

export interface Mp3Info {
  frames: number;
  sampleRate: number;
  channels: number;
  /** The distinct bitrates seen, in order of first appearance. */
  bitrateKbps: number[];
  samples: number;
  durationSeconds: number;
}

/** Bytes of an ID3v2 tag at the start of `bytes` (header, syncsafe size, optional footer), or 0. */
function id3v2Length(bytes: Buffer): number {
  if (bytes.length < 10 || bytes.toString('latin1', 0, 3) !== 'ID3') return 0;
  const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
  const footer = (bytes[5]! & 0x10) !== 0 ? 10 : 0;
  return 10 + size + footer;
}

export function parseMp3(bytes: Buffer): Mp3Info {
  let offset = id3v2Length(bytes);
  if (offset > bytes.length) throw new Error(`ID3v2 tag runs past the end of the ${bytes.length} bytes`);
  let frames = 0;
  let samples = 0;
  let sampleRate = 0;
  let channels = 0;
  const bitrates: number[] = [];
  while (offset < bytes.length) {
    if (offset + 4 > bytes.length) throw new Error(`Truncated frame header at offset ${offset}`);
    const b1 = bytes[offset + 1]!;
    const b2 = bytes[offset + 2]!;
    const b3 = bytes[offset + 3]!;
    if (bytes[offset] !== 0xff || (b1 & 0xe0) !== 0xe0) throw new Error(`No frame sync at offset ${offset}`);
    const version = (b1 >> 3) & 0b11;
    if (version === 1) throw new Error(`Reserved MPEG version at offset ${offset}`);
    if (((b1 >> 1) & 0b11) !== 0b01) throw new Error(`Not Layer III at offset ${offset}`);
    const bitrateIndex = b2 >> 4;
    if (bitrateIndex === 0 || bitrateIndex === 15) throw new Error(`Bitrate index ${bitrateIndex} at offset ${offset}`);
    const rateIndex = (b2 >> 2) & 0b11;
    if (rateIndex === 3) throw new Error(`Reserved sample-rate index at offset ${offset}`);
    const mpeg1 = version === 3;
    const rate = SAMPLE_RATES[version]![rateIndex]!;
    const kbps = (mpeg1 ? MPEG1_L3_KBPS : MPEG2_L3_KBPS)[bitrateIndex]!;
    const frameChannels = b3 >> 6 === 0b11 ? 1 : 2;
    if (frames === 0) {
      sampleRate = rate;
      channels = frameChannels;
    } else if (rate !== sampleRate || frameChannels !== channels) {
      throw new Error(`Frame at offset ${offset} changes the stream to ${rate} Hz, ${frameChannels} channel(s)`);
    }
    const padding = (b2 >> 1) & 1;
    const length = Math.floor(((mpeg1 ? 144 : 72) * kbps * 1000) / rate) + padding;
    if (offset + length > bytes.length) throw new Error(`Truncated frame at offset ${offset}: ${length} bytes declared, ${bytes.length - offset} left`);
    if (!bitrates.includes(kbps)) bitrates.push(kbps);
    frames++;
    samples += mpeg1 ? 1152 : 576;
    offset += length;
  }
  if (frames === 0) throw new Error(`No MPEG audio frames in ${bytes.length} bytes`);
  return { frames, sampleRate, channels, bitrateKbps: bitrates, samples, durationSeconds: samples / sampleRate };
}

/** Seconds of 16-bit mono PCM in `bytes` at `sampleRate`. */
export function pcmSeconds(bytes: Buffer, sampleRate: number): number {
  if (bytes.length % 2 !== 0) throw new Error(`${bytes.length} bytes is not a whole number of 16-bit samples`);
  return bytes.length / 2 / sampleRate;
}
