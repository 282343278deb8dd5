import { CREATION_TOKEN_MAX, creationToken } from '../../../core/contract/creation-token';
import { generateJobId, generateRunId, jobIdProblem, RUN_ID_PATTERN } from '../../../core/contract/naming';

describe('creationToken', () => {
  const run = generateRunId(Date.UTC(2026, 10, 22, 15, 6, 44), () => Buffer.alloc(8, 0x9c));

  it('is fleet + run, readable, when it fits in 64 characters', () => {
    expect(creationToken('gpu', run)).toBe('mf/gpu/r20261122t150644-9c9c9c9c9c9c9c9c');
  });

  it('hashes into 64 characters for a long fleet id, deterministically and without collisions', () => {
    const fleet = 'a-fleet-with-a-long-name-0123456';
    const token = creationToken(fleet, run);
    expect(token).toHaveLength(CREATION_TOKEN_MAX);
    expect(token).toMatch(/^mf\/a-fleet-with-a-long-name-0123456\/#[0-9a-f]+$/);
    expect(creationToken(fleet, run)).toBe(token);
    expect(creationToken(fleet, generateRunId())).not.toBe(token);
    expect(creationToken('another-fleet', run)).not.toBe(creationToken('a-fleet', run));
  });
});

describe('run ids', () => {
  it('are new for every run: two runs of one job never share a CreationToken', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => generateRunId()));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(RUN_ID_PATTERN);
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
});
