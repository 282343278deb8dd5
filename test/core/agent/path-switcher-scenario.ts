/**
 * Runs INSIDE a private mount namespace, for switcher.test.ts: a PathSwitcher binds a target onto a user
 * path; the target's mount is then replaced, as when its Mountpoint process is restarted, until the new
 * mount gets the old one's mount ID (the kernel reuses freed IDs). Prints what refresh() did, as JSON.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { topMount } from '../../../core/system/mountinfo';
import { PathSwitcher } from '../../../core/agent/path-switcher';

async function main(): Promise<void> {
  const dir = process.argv[2];
  const target = join(dir, 'target');
  const userPath = join(dir, 'user');
  mkdirSync(target);
  const mountTmpfs = (content: string) => {
    execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', target]);
    writeFileSync(join(target, 'who'), content);
    return topMount(target)!;
  };
  const first = mountTmpfs('first');
  const switcher = new PathSwitcher(userPath);
  await switcher.switchTo(target);
  // The process dies and its mount is detached; the bind on the user path keeps the old file system.
  let replaced = first;
  for (let i = 0; i < 50 && (replaced === first || replaced.id !== first.id); i++) {
    execFileSync('umount', ['-l', target]);
    replaced = mountTmpfs('restarted');
  }
  const rebound = await switcher.refresh();
  const result = {
    idReused: replaced.id === first.id,
    rebound,
    served: readFileSync(join(userPath, 'who'), 'utf8'),
  };
  await switcher.detachAll();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

void main();
