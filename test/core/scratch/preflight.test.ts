import { rootProblem } from '../../../core/scratch/preflight';

describe('rootProblem', () => {
  it('asks for root, which mounting and the lock files under /run need', () => {
    expect(rootProblem(1000)).toBe(
      'scratch run mounts a file system and must run as root (sudo mountfleet scratch run ...)',
    );
    expect(rootProblem(0)).toBeUndefined();
  });
});
