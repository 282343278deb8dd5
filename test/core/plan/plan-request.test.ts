/**
 * `plan`'s request to plan: a preset, a workload file and the flags together (which wins, in which order the
 * steps come), the run time's sources, and bad input as a usage error with the message of what was mistyped.
 * The model's figures: model.test.ts; the command's output: test/agent/commands/plan.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../../../core/common/errors';
import { planWorkload, type PlanRequest } from '../../../core/plan/plan-request';
import { PRESETS } from '../../../core/plan/presets';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'mf-plan-request-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const request = (fields: Partial<PlanRequest> = {}): PlanRequest => ({
  input: { gib: 10 },
  steps: [],
  prices: { region: 'us-east-1', overrides: [] },
  ...fields,
});

function workloadFile(content: object): string {
  const file = join(dir, 'workload.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

test("the preset's steps, then the file's, then the flags'; the flags' input over the file's", () => {
  const workloadFileName = workloadFile({
    input: { size: '20GiB', duration: '10m' },
    steps: [{ name: 'from-file', read: '1', write: '1' }],
    runTime: '30m',
  });
  const plan = planWorkload(
    request({ preset: 'encode-ladder', workloadFile: workloadFileName, steps: ['from-flag:read=2'] }),
  );
  expect(plan.steps.map((s) => s.name)).toEqual([
    ...PRESETS['encode-ladder'].steps.map((s) => s.name),
    'from-file',
    'from-flag',
  ]);
  expect(plan.input.gib).toBe(10);
  expect(plan.input.durationSeconds).toBe(600);
  expect(plan.runSeconds).toBe(1800);
});

test('the run time: --run-time, else the workload file, else the measured run; none is a usage error', () => {
  const file = workloadFile({ steps: [{ name: 's', read: '1' }], runTime: '20m' });
  const runSeconds = (fields: Partial<PlanRequest>) =>
    planWorkload(request({ steps: ['s:read=1'], ...fields })).runSeconds;
  expect(runSeconds({ runSeconds: 60, workloadFile: file, measuredRunSeconds: 90 })).toBe(60);
  expect(runSeconds({ workloadFile: file, measuredRunSeconds: 90 })).toBe(1200);
  expect(runSeconds({ measuredRunSeconds: 90 })).toBe(90);
  expect(() => planWorkload(request({ steps: ['s:read=1'] }))).toThrow(
    new UsageError('give the run time (--run-time), e.g. 55m'),
  );
});

test.each([
  {
    name: 'a step duration',
    fields: { steps: ['s:read=1,time=soon'] },
    message: /^"soon" is not a duration/,
  },
  { name: 'a step bit rate', fields: { steps: ['s:write=fastMbps'] }, message: /"fastMbps"/ },
  {
    name: 'an unknown region',
    fields: { prices: { region: 'xx-nowhere-1', overrides: [] } },
    message: /^no built-in prices for xx-nowhere-1/,
  },
  {
    name: 'a price override',
    fields: { prices: { region: 'us-east-1', overrides: ['cheap=1'] } },
    message: /^--price cheap=1: use KEY=NUMBER/,
  },
])('$name that cannot be used is a usage error (exit 2) saying what to give', ({ fields, message }) => {
  let err: unknown;
  try {
    planWorkload(request({ runSeconds: 60, ...fields }));
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(UsageError);
  expect((err as Error).message).toMatch(message);
});
