// Audio for the simulator's text-to-speech formats (speech.ts): raw PCM carrying a quiet tone, and MPEG
// audio Layer III frames of silence. Both are real audio a decoder or a player accepts, so a client (or the
// gateway's tests) can check what it got by decoding it, not only by counting bytes. Pure functions; the
// only state is a cache of one second of tone per sample rate and two frames per MP3 layout and bitrate.

const SECONDS_PER_CHARACTER = 0.06;
const MIN_SPEECH_SECONDS = 0.25;

/** How long the simulated voice takes to say `characters` characters at `speed` (1 = normal). */
export function speechDurationSeconds(characters: number, speed: number): number {
  return Math.max(MIN_SPEECH_SECONDS, characters * SECONDS_PER_CHARACTER) / speed;
}

/** Samples in `durationSeconds` of audio: the count every format agrees on (PCM exactly, MP3 rounded up to whole frames). */
export function sampleCount(durationSeconds: number, sampleRate: number): number {
  if (!Number.isFinite(durationSeconds) || durationSeconds < 0) throw new Error(`Invalid audio duration: ${durationSeconds}`);
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new Error(`Invalid sample rate: ${sampleRate}`);
  return Math.round(durationSeconds * sampleRate);
}

// ---- PCM --------------------------------------------------------------------------------------

const TONE_HZ = 220;
const TONE_AMPLITUDE = 3000;
const toneSeconds = new Map<number, Buffer>();

/**
 * One second of the tone, 16-bit signed little-endian mono. 220 Hz fits a whole number of periods into a
 * second, so copies of this second laid end to end join without a click, and any length of audio is
 * copies of it rather than a sine per sample.
 */
function toneSecond(sampleRate: number): Buffer {
  let tone = toneSeconds.get(sampleRate);
  if (!tone) {
    tone = Buffer.alloc(sampleRate * 2);
    const step = (2 * Math.PI * TONE_HZ) / sampleRate;
    for (let i = 0; i < sampleRate; i++) tone.writeInt16LE(Math.round(TONE_AMPLITUDE * Math.sin(step * i)), i * 2);
    toneSeconds.set(sampleRate, tone);
  }
  return tone;
}

/**
 * Samples `start` to `start + count` of the tone. A read-only view of the cached second when the range
 * does not cross the end of a second (every 100 ms chunk at a rate divisible by 10), a copy otherwise.
 */
export function pcmSlice(start: number, count: number, sampleRate: number): Buffer {
  const tone = toneSecond(sampleRate);
  const from = start % sampleRate;
  if (from + count <= sampleRate) return tone.subarray(from * 2, (from + count) * 2);
  return copyTone(tone, from, count);
}

function copyTone(tone: Buffer, from: number, count: number): Buffer {
  const out = Buffer.allocUnsafe(count * 2);
  let written = 0;
  let at = from * 2;
  while (written < out.length) {
    const n = tone.copy(out, written, at, Math.min(tone.length, at + out.length - written));
    written += n;
    at = 0;
  }
  return out;
}

/** `durationSeconds` of the tone as 16-bit signed little-endian mono: exactly round(duration × rate) samples, a fresh buffer. */
export function pcmAudio(durationSeconds: number, sampleRate: number): Buffer {
  return copyTone(toneSecond(sampleRate), 0, sampleCount(durationSeconds, sampleRate));
}

// ---- MPEG audio Layer III ---------------------------------------------------------------------

// Layer III bitrates by header index (0 is "free format", 15 is forbidden; neither is written).
const MPEG1_L3_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] as const;
const MPEG2_L3_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160] as const;

interface Mp3Layout {
  /** The header's 2-bit version: 3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5 (1 is reserved). */
  versionBits: number;
  /** The header's 2-bit sample-rate index within the version. */
  rateIndex: number;
  samplesPerFrame: number;
  /** Frame bytes = floor(slotFactor × bitrate / rate) + padding: samples per frame / 8. */
  slotFactor: number;
  bitrates: readonly number[];
}

function mp3Layout(sampleRate: number): Mp3Layout {
  const mpeg1 = [44100, 48000, 32000].indexOf(sampleRate);
  if (mpeg1 !== -1) return { versionBits: 3, rateIndex: mpeg1, samplesPerFrame: 1152, slotFactor: 144, bitrates: MPEG1_L3_KBPS };
  const mpeg2 = [22050, 24000, 16000].indexOf(sampleRate);
  if (mpeg2 !== -1) return { versionBits: 2, rateIndex: mpeg2, samplesPerFrame: 576, slotFactor: 72, bitrates: MPEG2_L3_KBPS };
  // MPEG-2.5 (not ISO, but every decoder reads it): the same frame layout as MPEG-2 at half its rates.
  const mpeg25 = [11025, 12000, 8000].indexOf(sampleRate);
  if (mpeg25 !== -1) return { versionBits: 0, rateIndex: mpeg25, samplesPerFrame: 576, slotFactor: 72, bitrates: MPEG2_L3_KBPS };
  throw new Error(`MPEG audio Layer III has no sample rate ${sampleRate} Hz`);
}

/** Whether Layer III has `bitrateKbps` at `sampleRate` (MPEG-1 and MPEG-2 have different bitrate tables). */
export function mp3BitrateAllowed(sampleRate: number, bitrateKbps: number): boolean {
  try {
    return mp3Layout(sampleRate).bitrates.indexOf(bitrateKbps) > 0;
  } catch {
    return false;
  }
}

/** Samples one MP3 frame holds at `sampleRate`: 1152 for MPEG-1, 576 for MPEG-2 and 2.5. */
export function mp3SamplesPerFrame(sampleRate: number): number {
  return mp3Layout(sampleRate).samplesPerFrame;
}

/**
 * One silent mono frame: the 4-byte header (no CRC), then side information and main data all zeros. Zero
 * side information says main_data_begin 0 (nothing borrowed from earlier frames) and part2_3_length 0 in
 * every granule (no scale factors, no Huffman data), so a decoder reads every coefficient as 0: silence.
 */
function silentFrame(layout: Mp3Layout, bitrateIndex: number, padding: boolean, bytes: number): Buffer {
  const frame = Buffer.alloc(bytes);
  frame[0] = 0xff;
  // 3 more sync bits, version, layer III (01), protection bit 1 (no CRC follows the header).
  frame[1] = 0xe0 | (layout.versionBits << 3) | (0b01 << 1) | 1;
  // Private bit 0.
  frame[2] = (bitrateIndex << 4) | (layout.rateIndex << 2) | (padding ? 0b10 : 0);
  // Channel mode 11 (mono), mode extension 0, not copyrighted, copy, no emphasis.
  frame[3] = 0b11 << 6;
  return frame;
}

const frameCache = new Map<string, { plain: Buffer; padded: Buffer }>();

/**
 * `durationSeconds` of silence as MPEG audio Layer III frames, one Buffer each: ceil(round(duration ×
 * rate) / samples per frame) of them. Where the frame length is not a whole number of bytes (44100 and
 * 22050 Hz), the padding bit is set the way encoders do, on the frames where the accumulated fraction
 * carries, so the stream keeps the exact average bitrate. Frames with the same padding are the same
 * (cached) Buffer: read them, never write to them. Throws on a rate or bitrate pair Layer III does not have.
 */
export function mp3Frames(durationSeconds: number, sampleRate: number, bitrateKbps: number): Buffer[] {
  const layout = mp3Layout(sampleRate);
  const bitrateIndex = layout.bitrates.indexOf(bitrateKbps);
  if (bitrateIndex <= 0) throw new Error(`MPEG audio Layer III has no ${bitrateKbps} kbps at ${sampleRate} Hz`);
  const slots = layout.slotFactor * bitrateKbps * 1000;
  const base = Math.floor(slots / sampleRate);
  const remainder = slots % sampleRate;
  const key = `${sampleRate}/${bitrateKbps}`;
  let cached = frameCache.get(key);
  if (!cached) {
    const plain = silentFrame(layout, bitrateIndex, false, base);
    cached = { plain, padded: remainder === 0 ? plain : silentFrame(layout, bitrateIndex, true, base + 1) };
    frameCache.set(key, cached);
  }
  const count = Math.ceil(sampleCount(durationSeconds, sampleRate) / layout.samplesPerFrame);
  const frames = new Array<Buffer>(count);
  let carried = 0;
  for (let i = 0; i < count; i++) {
    carried += remainder;
    if (carried >= sampleRate) {
      carried -= sampleRate;
      frames[i] = cached.padded;
    } else frames[i] = cached.plain;
  }
  return frames;
}
