/** The facts of this machine the agent reads once at start: memory, instance store (the cache volume), interfaces. */
import { mkdirSync, statfsSync } from 'node:fs';
import { planCacheVolume, type CacheVolume, type MemoryFacts } from '../tuner';
import { discoverInstanceStore, listNetworkInterfaces, readMemory } from './host-readers';

/** What the agent tunes for besides the instance type. */
export interface HostFacts {
  readonly memory: MemoryFacts;
  readonly cacheVolume: CacheVolume;
  readonly interfaces: string[];
}

/** Memory, instance store and interfaces of this machine; `systemRoot` prefixes the cache directory. */
export function gatherHostFacts(systemRoot = '/'): HostFacts {
  const disks = discoverInstanceStore('/');
  mkdirSync(systemRoot, { recursive: true });
  const fs = statfsSync(systemRoot);
  const rootFreeMiB = Math.floor((fs.bavail * fs.bsize) / 1024 / 1024);
  return {
    memory: readMemory('/'),
    cacheVolume: planCacheVolume(disks, rootFreeMiB, systemRoot),
    interfaces: listNetworkInterfaces(),
  };
}
