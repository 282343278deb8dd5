export {
  type ClientOptions,
  autoScalingClient,
  batchClient,
  cloudWatchClient,
  ec2Client,
  efsClient,
  isDirectoryBucket,
  lambdaClient,
  s3Client,
  s3ExpressClient,
  taggingClient,
} from './clients';
