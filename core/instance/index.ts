export { type HostFacts, gatherHostFacts } from './host-facts';
export {
  type InstanceIdentity,
  type InstanceMetadataReader,
  metadataService,
  readInstanceIdentity,
} from './imds';
export { lookupInstanceType } from './instance-type-lookup';
export {
  TERMINATION_POLL_MS,
  type TerminationNotice,
  autoScalingTerminationReader,
  describeTermination,
  terminationNoticeReader,
  watchForTermination,
} from './termination-notice';
export { type CsiTuneRequest, type CsiTuneResult, tuneCsiVolumes } from './tune-csi';
export { formatTuneReport, tuneForInstanceType } from './tune-report';
