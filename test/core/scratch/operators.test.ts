import { scratchListTable } from '../../../core/scratch/operators';

describe('scratchListTable', () => {
  it('aligns one line per file system under the heading, marks idle and foreign ones, and says ages briefly', () => {
    const table = scratchListTable([
      {
        fileSystemId: 'fs-0123456789abcdef0',
        job: 'encode-42',
        ownerInstance: 'i-0abc',
        state: 'available',
        availabilityZone: 'us-east-1a',
        ageSeconds: 95,
        mountTargets: 1,
      },
      {
        fileSystemId: 'fs-1',
        state: 'available',
        ageSeconds: 3 * 3600,
        mountTargets: 0,
        markedIdleAt: '2026-01-01T00:00:00Z',
      },
      { fileSystemId: 'fs-2', state: 'creating', mountTargets: 0, foreign: 'backups on' },
    ]);
    expect(table).toBe(
      [
        'FILE SYSTEM           JOB        OWNER   AGE   STATE                             ZONE        MOUNT TARGETS',
        'fs-0123456789abcdef0  encode-42  i-0abc  95s   available                         us-east-1a  1',
        'fs-1                  -          -       3.0h  available (marked idle)           -           0',
        'fs-2                  -          -       -     creating (foreign: never reaped)  -           0',
        '',
      ].join('\n'),
    );
  });
});
