/** The NFS byte counters from text in the kernel's /proc/self/mountstats format (fs/nfs/super.c, statvers 1.1). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountStatsReader, parseNfsByteCounters } from '../../../core/credit/mountstats';

// An EFS TLS mount (efs-utils: the device is the local stunnel), a plain NFS mount, and a non-NFS mount.
const MOUNTSTATS = `device proc mounted on /proc with fstype proc
device /dev/nvme0n1p1 mounted on / with fstype xfs
device 127.0.0.1:/ mounted on /mnt/scratch with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,acregmin=3,acregmax=60,acdirmin=30,acdirmax=60,hard,noresvport,proto=tcp,port=20049,timeo=600,retrans=2,sec=sys,clientaddr=127.0.0.1,local_lock=none
\tage:\t3731
\tcaps:\tcaps=0x3ffbf,wtmult=512,dtsize=4096,bsize=0,namlen=255
\tnfsv4:\tbm0=0xfdffbfff,bm1=0xf9be3e,bm2=0x68800,acl=0x3,sessions,pnfs=not configured,lease_time=60,lease_expired=0
\tsec:\tflavor=1,pseudoflavor=1
\tevents:\t0 12 0 0 3 8 21 0 0 4 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
\tbytes:\t3221225472 1073741824 0 0 3145728000 1073741824 786432 262144
\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)
\txprt:\ttcp 0 0 1 0 2 3125 3125 0 3125 0 2 0 0
\tper-op statistics
\t        NULL: 1 1 0 44 24 0 0 0 0
\t        READ: 3000 3000 0 480000 3146112000 12 3400 3500 0
\t       WRITE: 1024 1024 0 1073905664 163840 0 2100 2200 0
device 10.0.1.12:/ mounted on /mnt/scratch\\040two with fstype nfs4 statvers=1.1
\topts:\trw,vers=4.1
\tbytes:\t10 20 0 0 30 40 0 0
device tmpfs mounted on /mnt/tmp with fstype tmpfs
`;

describe('mountstats', () => {
  it("reads the server byte counts of the NFS mount at a path, found by its mount point (the device is stunnel's)", () => {
    expect(parseNfsByteCounters(MOUNTSTATS, '/mnt/scratch')).toEqual({
      serverReadBytes: 3145728000,
      serverWriteBytes: 1073741824,
    });
  });

  it('unescapes the mount point the way the kernel escapes it (space as \\040)', () => {
    expect(parseNfsByteCounters(MOUNTSTATS, '/mnt/scratch two')).toEqual({
      serverReadBytes: 30,
      serverWriteBytes: 40,
    });
  });

  it('has nothing for a path that is not an NFS mount, or a block without a bytes line', () => {
    expect(parseNfsByteCounters(MOUNTSTATS, '/mnt/tmp')).toBeUndefined();
    expect(parseNfsByteCounters(MOUNTSTATS, '/mnt/none')).toBeUndefined();
    expect(
      parseNfsByteCounters(
        'device 127.0.0.1:/ mounted on /x with fstype nfs4 statvers=1.1\n\tage:\t1\n',
        '/x',
      ),
    ).toBeUndefined();
  });

  it('takes the last mount stacked on the same path', () => {
    const stacked = `${MOUNTSTATS}device 127.0.0.1:/ mounted on /mnt/scratch with fstype nfs4 statvers=1.1\n\tbytes:\t0 0 0 0 5 6 0 0\n`;
    expect(parseNfsByteCounters(stacked, '/mnt/scratch')).toEqual({
      serverReadBytes: 5,
      serverWriteBytes: 6,
    });
  });

  it('reads a file, and gives undefined when it cannot (no procfs, no such mount)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mf-mountstats-'));
    try {
      const file = join(dir, 'mountstats');
      writeFileSync(file, MOUNTSTATS);
      expect(mountStatsReader('/mnt/scratch', file)()).toEqual({
        serverReadBytes: 3145728000,
        serverWriteBytes: 1073741824,
      });
      expect(mountStatsReader('/mnt/scratch', join(dir, 'missing'))()).toBeUndefined();
      // This machine's own file: the tests' mounts are no NFS mounts.
      expect(mountStatsReader('/')()).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
