/**
 * Named step lists for common scratch workloads. Each multiplier is derived from what the steps do,
 * never fitted to a measurement; the derivation is written next to each step.
 */
import type { Step } from './workload';

/**
 * A bit-rate ladder for H.264 video-on-demand renditions. The measured encode does not list its output
 * bit rates, so this is a stated assumption: a common ladder (0.2 / 0.4 / 0.8 / 1.2 / 2.5 / 5 Mbps).
 * Outputs are 0.5-3% of the volume of this pipeline, so a different ladder moves the result little.
 */
const H264_LADDER_MBPS: Readonly<Record<string, number>> = {
  '144p': 0.2,
  '240p': 0.4,
  '360p': 0.8,
  '480p': 1.2,
  '720p': 2.5,
  '1080p': 5.0,
};

/**
 * The uncompressed audio track of a ProRes master: PCM, 48 kHz, 24-bit, stereo = 2.304 Mbps. An
 * audio-only ffmpeg run demuxes just these samples (the measured audio step took 28 s, far too short to
 * read the whole 30 GiB input on either storage), so that is what the audio step reads.
 */
const PCM_AUDIO_MBPS = (48000 * 24 * 2) / 1e6;
/** AAC output of the audio step. */
const AAC_AUDIO_MBPS = 0.128;

interface Preset {
  readonly description: string;
  readonly steps: readonly Step[];
}

export const PRESETS: Readonly<Record<string, Preset>> = {
  'encode-ladder': {
    description:
      'download the input to scratch, encode six H.264 renditions two-pass from it, then extract the audio ' +
      '(the 30-minute ProRes encode ladder of docs/planning.md)',
    steps: [
      // The input arrives from S3 and is written to scratch once: write = 1 x input, nothing read from scratch.
      { name: 'download', read: { kind: 'input', multiple: 0 }, write: { kind: 'input', multiple: 1 } },
      // Two-pass encoding decodes the whole input in each pass (pass 1 analyses, pass 2 encodes):
      // read = 2 x input. Only pass 2 writes the rendition, at its ladder bit rate over the input's
      // duration. Pass 1's statistics file is small and not modelled.
      ...Object.entries(H264_LADDER_MBPS).map(([name, mbps]): Step => ({
        name,
        read: { kind: 'input', multiple: 2 },
        write: { kind: 'rate', mbps },
      })),
      {
        name: 'audio',
        read: { kind: 'rate', mbps: PCM_AUDIO_MBPS },
        write: { kind: 'rate', mbps: AAC_AUDIO_MBPS },
      },
    ],
  },
};
