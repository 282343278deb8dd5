/**
 * The burst-credit check of `--expected-io` (`scratch run`, `batch submit`), before anything is created: every
 * new bursting EFS file system starts with 2.1 TiB of burst credit (about six hours at the 100 MiB/s burst
 * rate). A job that moves more than that through a small, fresh scratch file system drops to the baseline
 * (50 KiB/s per GiB stored, at least 1 MiB/s) and crawls, so we say so before creating anything. The check
 * counts every byte in full (reads are really metered at a third): erring on the side of a warning.
 */
import { GIB, MIB } from '../common';
import { BURST_MIB_PER_S_PER_TIB, INITIAL_CREDIT_BYTES } from './model';

/** A small file system's burst rate: what "about N h" is counted at. */
const BURST_BYTES_PER_SECOND = BURST_MIB_PER_S_PER_TIB * MIB;

interface PreflightVerdict {
  /** `warn`: over the credit, go ahead anyway; `refuse`: over the credit with --strict. */
  readonly status: 'ok' | 'warn' | 'refuse';
  readonly message: string;
}

function tib(bytes: number): string {
  return `${(bytes / GIB / 1024).toFixed(2)} TiB`;
}

/** Compares an expected I/O volume (bytes read + written) with the initial burst credit. */
export function burstCreditPreflight(expectedIoBytes: number, strict: boolean): PreflightVerdict {
  const burstHours = expectedIoBytes / BURST_BYTES_PER_SECOND / 3600;
  if (expectedIoBytes <= INITIAL_CREDIT_BYTES) {
    return {
      status: 'ok',
      message: `expected I/O ${tib(expectedIoBytes)} fits in the 2.1 TiB initial burst credit (about ${burstHours.toFixed(1)} h at 100 MiB/s)`,
    };
  }
  const jobs = Math.ceil(expectedIoBytes / INITIAL_CREDIT_BYTES);
  return {
    status: strict ? 'refuse' : 'warn',
    message:
      `expected I/O ${tib(expectedIoBytes)} exceeds the 2.1 TiB initial burst credit of a new bursting file system: ` +
      `once it is spent, throughput drops to the baseline (50 KiB/s per GiB stored, at least 1 MiB/s). Instead: ` +
      `use an EBS gp3 volume for this job (125 MiB/s included, up to 1,000 MiB/s provisioned, priced by size), ` +
      `or an EFS file system with elastic throughput (no credit, paid per GB transferred), ` +
      `or split the work into ${jobs} jobs of at most 2.1 TiB each (every scratch file system starts with fresh credit). ` +
      `\`mountfleet plan\` compares the costs.`,
  };
}
