import {
  CREATION_TOKEN_MAX,
  creationToken,
  generateJobId,
  jobIdProblem,
  nameTag,
} from '../../../core/scratch/naming';

describe('creationToken', () => {
  it('is fleet + job, readable, when it fits in 64 characters', () => {
    expect(creationToken('gpu', 'train-42')).toBe('mf/gpu/train-42');
  });

  it('hashes long job ids into 64 characters, deterministically and without collisions', () => {
    const longJob = `batch:${'a'.repeat(100)}`;
    const token = creationToken('a-fleet-with-a-long-name-0123456', longJob);
    expect(token).toHaveLength(CREATION_TOKEN_MAX);
    expect(token).toMatch(/^mf\/a-fleet-with-a-long-name-0123456\/#[0-9a-f]+$/);
    expect(creationToken('a-fleet-with-a-long-name-0123456', longJob)).toBe(token);
    expect(creationToken('a-fleet-with-a-long-name-0123456', `${longJob}b`)).not.toBe(token);
    expect(creationToken('another-fleet', longJob)).not.toBe(creationToken('a-fleet', longJob));
  });

  it('never confuses a plain token with a hashed one (job ids cannot contain #)', () => {
    expect(jobIdProblem('#abc')).toBeDefined();
  });
});

describe('job ids', () => {
  it('accepts scheduler ids and rejects what a tag or token cannot carry', () => {
    for (const ok of ['42', 'train-7', 'array:12/3', 'a1b2c3d4-e5f6-4a5b-8c9d-0e1f2a3b4c5d', 'x@y+z=1']) {
      expect(jobIdProblem(ok)).toBeUndefined();
    }
    for (const bad of ['', '-leading', 'has space', 'semi;colon', 'x'.repeat(129)]) {
      expect(jobIdProblem(bad)).toMatch(/must be 1-128 characters/);
    }
  });

  it('generates valid, time-ordered ids', () => {
    const id = generateJobId(Date.UTC(2026, 10, 22, 15, 6, 44), () => Buffer.from([0xab, 0xcd, 0xef]));
    expect(id).toBe('job-20261122t150644-abcdef');
    expect(jobIdProblem(id)).toBeUndefined();
    expect(jobIdProblem(generateJobId())).toBeUndefined();
  });

  it('names the file system after fleet and job', () => {
    expect(nameTag('gpu', 'train-42')).toBe('mountfleet-scratch-gpu-train-42');
  });
});
