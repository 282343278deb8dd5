import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { ExpressCache } from '../../lib';
import { AZS, testStack } from './support';

describe('ExpressCache', () => {
  test('one encrypted single-zone directory bucket per AZ ID, with expiry, abort and metrics rules', () => {
    const stack = testStack();
    new ExpressCache(stack, 'Cache', { azIds: AZS, bucketBaseName: 'ml-cache' });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::S3Express::DirectoryBucket', 2);
    t.hasResource('AWS::S3Express::DirectoryBucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        BucketName: 'ml-cache--use1-az4--x-s3',
        DataRedundancy: 'SingleAvailabilityZone',
        LocationName: 'use1-az4',
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LifecycleConfiguration: {
          Rules: [
            { Id: 'ExpireCachedBlocks', Status: 'Enabled', ExpirationInDays: 7 },
            {
              Id: 'AbortIncompleteUploads',
              Status: 'Enabled',
              AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
            },
          ],
        },
        MetricsConfigurations: [{ Id: 'EntireBucket' }],
      },
    });
  });

  test('grantMountpointCache allows s3express:CreateSession on exactly the cache buckets', () => {
    const stack = testStack();
    const cache = new ExpressCache(stack, 'Cache', { azIds: AZS, removalPolicy: RemovalPolicy.DESTROY });
    const role = new iam.Role(stack, 'R', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
    cache.grantMountpointCache(role);
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          {
            Action: 's3express:CreateSession',
            Effect: 'Allow',
            Resource: [
              { 'Fn::GetAtt': [Match.stringLikeRegexp('^Cacheuse1az4'), 'Arn'] },
              { 'Fn::GetAtt': [Match.stringLikeRegexp('^Cacheuse1az6'), 'Arn'] },
            ],
          },
        ],
      },
    });
    t.hasResource('AWS::S3Express::DirectoryBucket', { DeletionPolicy: 'Delete' });
  });

  test('fromBucketNames builds s3express bucket ARNs and checks each name against its zone', () => {
    const stack = testStack();
    const cache = ExpressCache.fromBucketNames(stack, 'Imported', {
      bucketNames: { 'use1-az4': 'c--use1-az4--x-s3' },
    });
    expect(stack.resolve(cache.bucketArn('use1-az4'))).toEqual({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':s3express:us-east-1:',
          { Ref: 'AWS::AccountId' },
          ':bucket/c--use1-az4--x-s3',
        ],
      ],
    });
    expect(() =>
      ExpressCache.fromBucketNames(testStack(), 'I', { bucketNames: { 'use1-az4': 'c--use1-az6--x-s3' } }),
    ).toThrow(/bucketNames\.use1-az4: "c--use1-az6--x-s3" is not in use1-az4/);
    expect(() => cache.bucketFor('use1-az1')).toThrow(/bucketFor\(use1-az1\): no cache bucket in use1-az1/);
  });

  test('rejects an over-long bucket name at synth', () => {
    expect(
      () => new ExpressCache(testStack(), 'Cache', { azIds: ['use1-az4'], bucketBaseName: 'a'.repeat(50) }),
    ).toThrow(
      /^Test\/Cache: bucketBaseName: bucket name "a{50}--use1-az4--x-s3" is 66 characters — directory bucket names have 63 at most/,
    );
  });

  test('rejects a bad base name, a duplicate AZ ID and a fractional expiry', () => {
    expect(() => new ExpressCache(testStack(), 'C', { azIds: AZS, bucketBaseName: 'Bad_Name' })).toThrow(
      /bucketBaseName: "Bad_Name" is not a valid base name/,
    );
    expect(() => new ExpressCache(testStack(), 'C', { azIds: AZS, bucketBaseName: 'a--b' })).toThrow(
      /contains "--"/,
    );
    expect(() => new ExpressCache(testStack(), 'C', { azIds: ['use1-az4', 'use1-az4'] })).toThrow(
      /azIds\[1\]: "use1-az4" is listed twice/,
    );
    expect(() => new ExpressCache(testStack(), 'C', { azIds: AZS, expiration: Duration.hours(36) })).toThrow(
      /expiration: 1 day 12 hours is not a whole number of days/,
    );
  });
});
