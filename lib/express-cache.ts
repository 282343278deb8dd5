import { Duration, RemovalPolicy, Resource, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3express from 'aws-cdk-lib/aws-s3express';
import { Construct } from 'constructs';
import { DIRECTORY_BUCKET_NAME_PATTERN } from '../core/contract';
import type { IExpressCache } from './interfaces';
import { invalidProp, validateAzIds } from './private/validation';

/** The request-metrics filter every cache bucket gets, so the `metric*` methods have data to show. */
export const EXPRESS_CACHE_METRICS_FILTER_ID = 'EntireBucket';

/** Props of {@link ExpressCache.fromBucketNames}. */
export interface ExpressCacheAttributes {
  /** Existing directory bucket name per AZ ID, e.g. `{ 'use1-az4': 'cache--use1-az4--x-s3' }`. */
  readonly bucketNames: Record<string, string>;
  /** The KMS key the buckets are encrypted with. @default - SSE-S3 (no key grants) */
  readonly encryptionKey?: kms.IKey;
}

abstract class ExpressCacheBase extends Resource implements IExpressCache {
  abstract readonly bucketNames: Record<string, string>;
  protected abstract readonly encryptionKey?: kms.IKey;
  protected abstract arnFor(azId: string): string;

  get azIds(): string[] {
    return Object.keys(this.bucketNames);
  }

  bucketFor(azId: string): string {
    const name = this.bucketNames[azId];
    if (name === undefined) {
      invalidProp(
        this,
        `bucketFor(${azId})`,
        `no cache bucket in ${azId}`,
        `the cache has ${this.azIds.join(', ')}`,
      );
    }
    return name;
  }

  bucketArn(azId: string): string {
    this.bucketFor(azId);
    return this.arnFor(azId);
  }

  grantMountpointCache(grantee: iam.IGrantable): iam.Grant {
    const grant = iam.Grant.addToPrincipal({
      grantee,
      actions: ['s3express:CreateSession'],
      resourceArns: this.azIds.map((azId) => this.arnFor(azId)),
    });
    this.encryptionKey?.grant(grantee, 'kms:Decrypt', 'kms:GenerateDataKey');
    return grant;
  }

  metric(metricName: string, azId: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/S3',
      metricName,
      dimensionsMap: { BucketName: this.bucketFor(azId), FilterId: EXPRESS_CACHE_METRICS_FILTER_ID },
      statistic: 'Sum',
      period: Duration.minutes(5),
      ...props,
    });
  }

  /** All requests to the zone's cache bucket (Sum). */
  metricAllRequests(azId: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('AllRequests', azId, props);
  }

  /** 4xx responses of the zone's cache bucket (Sum): mostly misses on GET. */
  metric4xxErrors(azId: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('4xxErrors', azId, props);
  }

  /** 5xx responses of the zone's cache bucket (Sum): the zone or the bucket is in trouble. */
  metric5xxErrors(azId: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('5xxErrors', azId, props);
  }

  /** Time to first byte of the zone's cache bucket (p90). */
  metricFirstByteLatency(azId: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('FirstByteLatency', azId, { statistic: 'p90', ...props });
  }
}

/** Props of {@link ExpressCache}. */
export interface ExpressCacheProps {
  /** AZ IDs (not names) to put a cache bucket in, e.g. `['use1-az4', 'use1-az6']`. */
  readonly azIds: string[];
  /**
   * Base of the bucket names: each bucket is `<base>--<azid>--x-s3` (63 characters at most, unique in
   * its zone across all accounts).
   * @default - CloudFormation generates a unique name per bucket
   */
  readonly bucketBaseName?: string;
  /** How long a cached block lives before the lifecycle rule expires it. @default Duration.days(7) */
  readonly expiration?: Duration;
  /** When unfinished multipart uploads are aborted. @default Duration.days(1) */
  readonly abortIncompleteUploadsAfter?: Duration;
  /** A KMS key for SSE-KMS (with S3 Bucket Keys). @default - SSE-S3 (AES256) */
  readonly encryptionKey?: kms.IKey;
  /**
   * What happens to the buckets when they leave the stack. A directory bucket can only be deleted when
   * empty; with RETAIN the expiration rule empties it within `expiration`, after which it costs nothing.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * A shared Mountpoint cache in S3 Express One Zone: one `AWS::S3Express::DirectoryBucket` per AZ ID
 * (`SingleAvailabilityZone`), encrypted, with lifecycle rules that keep it from growing without bound
 * (Mountpoint never deletes cache blocks) and a request-metrics filter for the dashboard.
 */
export class ExpressCache extends ExpressCacheBase {
  /** Imports existing directory buckets (names validated: `base--<azid>--x-s3`, matching their AZ ID). */
  static fromBucketNames(scope: Construct, id: string, attrs: ExpressCacheAttributes): IExpressCache {
    class Imported extends ExpressCacheBase {
      readonly bucketNames = { ...attrs.bucketNames };
      protected readonly encryptionKey = attrs.encryptionKey;
      protected arnFor(azId: string): string {
        return Stack.of(this).formatArn({
          service: 's3express',
          resource: 'bucket',
          resourceName: this.bucketNames[azId],
        });
      }
    }
    const imported = new Imported(scope, id);
    validateAzIds(imported, 'bucketNames', Object.keys(attrs.bucketNames), Stack.of(imported).region);
    for (const [azId, name] of Object.entries(attrs.bucketNames)) {
      if (Token.isUnresolved(name)) continue;
      checkBucketName(imported, `bucketNames.${azId}`, name, azId);
    }
    return imported;
  }

  /** Directory bucket name per AZ ID (tokens when CloudFormation names them). */
  readonly bucketNames: Record<string, string>;
  /** The L1 directory bucket per AZ ID. */
  readonly buckets: Record<string, s3express.CfnDirectoryBucket>;
  protected readonly encryptionKey?: kms.IKey;

  constructor(scope: Construct, id: string, props: ExpressCacheProps) {
    super(scope, id);
    validateAzIds(this, 'azIds', props.azIds, Stack.of(this).region);
    const expiration = wholeDays(this, 'expiration', props.expiration ?? Duration.days(7));
    const abortAfter = wholeDays(
      this,
      'abortIncompleteUploadsAfter',
      props.abortIncompleteUploadsAfter ?? Duration.days(1),
    );
    const base = props.bucketBaseName;
    if (base !== undefined && !Token.isUnresolved(base) && !/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/.test(base)) {
      invalidProp(
        this,
        'bucketBaseName',
        `"${base}" is not a valid base name`,
        'use lower-case letters, digits and single hyphens',
      );
    }
    if (base !== undefined && base.includes('--')) {
      invalidProp(this, 'bucketBaseName', `"${base}" contains "--"`, 'S3 reserves "--" for the zone suffix');
    }
    this.encryptionKey = props.encryptionKey;

    this.buckets = {};
    this.bucketNames = {};
    for (const azId of props.azIds) {
      const name = base === undefined ? undefined : `${base}--${azId}--x-s3`;
      if (name !== undefined && !Token.isUnresolved(name))
        checkBucketName(this, 'bucketBaseName', name, azId);
      // L2 convention: the only child of a single-resource construct is `Resource`; here one per zone.
      const bucket = new s3express.CfnDirectoryBucket(this, azId, {
        bucketName: name,
        dataRedundancy: 'SingleAvailabilityZone',
        locationName: azId,
        bucketEncryption: {
          serverSideEncryptionConfiguration: [
            props.encryptionKey
              ? {
                  serverSideEncryptionByDefault: {
                    sseAlgorithm: 'aws:kms',
                    kmsMasterKeyId: props.encryptionKey.keyArn,
                  },
                  bucketKeyEnabled: true,
                }
              : { serverSideEncryptionByDefault: { sseAlgorithm: 'AES256' } },
          ],
        },
        lifecycleConfiguration: {
          rules: [
            { id: 'ExpireCachedBlocks', status: 'Enabled', expirationInDays: expiration },
            {
              id: 'AbortIncompleteUploads',
              status: 'Enabled',
              abortIncompleteMultipartUpload: { daysAfterInitiation: abortAfter },
            },
          ],
        },
        metricsConfigurations: [{ id: EXPRESS_CACHE_METRICS_FILTER_ID }],
      });
      bucket.applyRemovalPolicy(props.removalPolicy ?? RemovalPolicy.RETAIN);
      this.buckets[azId] = bucket;
      // A given name is the bucket's Ref: using it keeps Ref/GetAtt off the resource, which emulators skip.
      this.bucketNames[azId] = name ?? bucket.ref;
    }
  }

  protected arnFor(azId: string): string {
    const name = this.bucketNames[azId];
    return name === this.buckets[azId].ref
      ? this.buckets[azId].attrArn
      : Stack.of(this).formatArn({ service: 's3express', resource: 'bucket', resourceName: name });
  }
}

function wholeDays(scope: Construct, field: string, d: Duration): number {
  const days = d.toDays({ integral: false });
  if (!Number.isInteger(days) || days < 1) {
    invalidProp(
      scope,
      field,
      `${d.toHumanString()} is not a whole number of days`,
      'lifecycle rules count whole days, at least 1',
    );
  }
  return days;
}

function checkBucketName(scope: Construct, field: string, name: string, azId: string): void {
  if (name.length > 63) {
    invalidProp(
      scope,
      field,
      `bucket name "${name}" is ${name.length} characters`,
      'directory bucket names have 63 at most: shorten the base name',
    );
  }
  if (!DIRECTORY_BUCKET_NAME_PATTERN.test(name)) {
    invalidProp(scope, field, `"${name}" is not a directory bucket name`, 'use base--<azid>--x-s3');
  }
  if (!name.endsWith(`--${azId}--x-s3`)) {
    invalidProp(scope, field, `"${name}" is not in ${azId}`, `a bucket for ${azId} ends in --${azId}--x-s3`);
  }
}
