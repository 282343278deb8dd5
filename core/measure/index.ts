export { type LatencyTarget, latencyCsv, measureLatency, sizesUpTo } from './latency';
export { type MountCaches, SHARED_CACHE_MAX_OBJECT_BYTES, mountCaches } from './mount-caches';
export { benchRead } from './read';
export { benchS3Client } from './s3-clients';
export { formatSize, latencySvg } from './svg';
export { sparkline, timelineSvg } from './timeline';
export { DataSetError, type SampleFormat, checkDirectory, findDataSet } from './train-data';
export { type EpochResult, benchTrain } from './train';
export { ManifestError, type WarmFile, type WarmProgress, filesToWarm, sizeFiles, warm } from './warm';
