/**
 * libuv's thread pool, sized before anything uses it. Node's async file calls all run on it, 4 threads unless
 * UV_THREADPOOL_SIZE says otherwise, so `warm --parallel 16` or `bench read` would have at most 4 reads in flight
 * whatever they asked for. libuv reads the variable once, when the pool first starts: the entry calls this before
 * anything runs (no module of the agent does file or DNS work as it loads). A size from the caller's environment
 * wins.
 */
export const AGENT_THREADPOOL_SIZE = 128;

export function sizeThreadPool(): void {
  process.env.UV_THREADPOOL_SIZE ||= String(AGENT_THREADPOOL_SIZE);
}
