/**
 * Offline validation of rendered Kubernetes objects against the published OpenAPI schemas, with
 * `kubernetes-validate` (PyPI, pinned in scripts/setup.sh; it ships the schemas, so no network is used).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './moto';

export const KUBERNETES_VALIDATE = join(REPO_ROOT, '.venv', 'bin', 'kubernetes-validate');
/** The oldest Kubernetes the CSI driver's main line supports, and the newest the schemas cover. */
export const KUBERNETES_VERSIONS = ['1.31.0', '1.37.0'] as const;

/** Runs kubernetes-validate --strict on a YAML stream; returns its findings ('' when every object passes). */
export function kubernetesValidate(yaml: string, version: string): string {
  if (!existsSync(KUBERNETES_VALIDATE))
    throw new Error(
      `${KUBERNETES_VALIDATE} is missing: run scripts/setup.sh (it installs kubernetes-validate)`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'mf-k8s-'));
  const file = join(dir, 'manifests.yaml');
  writeFileSync(file, yaml);
  try {
    execFileSync(KUBERNETES_VALIDATE, ['--strict', '--quiet', '-k', version, file], {
      encoding: 'utf8',
      stdio: 'pipe',
      timeout: 60000,
    });
    return '';
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; status?: number };
    return `exit ${err.status}\n${err.stdout ?? ''}${err.stderr ?? ''}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
