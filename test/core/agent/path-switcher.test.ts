/** PathSwitcher on real mounts (tmpfs and binds in a private mount namespace). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inPrivateNamespace } from '../../agent/commands/up/supervise-harness';

test('a restarted target is rebound even when its new mount reuses the old mount ID', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mountfleet-switcher-'));
  try {
    const out = await inPrivateNamespace(join(__dirname, 'path-switcher-scenario.ts'), {}, [dir]);
    expect(JSON.parse(out)).toEqual({ idReused: true, rebound: true, served: 'restarted' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
