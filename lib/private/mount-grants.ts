import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { DIRECTORY_BUCKET_NAME_PATTERN, mountReplacesObjects } from '../../core/contract';
import { acknowledgeWildcardResource } from './nag';

/** One Mountpoint mount of a bucket prefix, as far as IAM is concerned. */
interface BucketMountGrant {
  readonly bucket: s3.IBucket;
  /** Key prefix (empty: the whole bucket). */
  readonly prefix: string;
  /** `read-write` adds PutObject and AbortMultipartUpload under the prefix. */
  readonly access: 'read-only' | 'read-write';
  /**
   * A `mutable` read-write mount also gets DeleteObject: Mountpoint deletes only with --allow-delete, which the
   * agent passes by the same rule (mountReplacesObjects).
   */
  readonly dataset: 'immutable' | 'mutable';
  /** Names the mount in the cdk-nag acknowledgement of the `prefix*` grant. */
  readonly description: string;
}

/**
 * What Mountpoint needs to mount `m.prefix` of `m.bucket` (Mountpoint doc/CONFIGURATION.md "IAM
 * permissions"): ListBucket limited by `s3:prefix`, object actions on `bucket/prefix*`, KMS on the bucket
 * key. A directory bucket authorizes by session instead: `s3express:CreateSession` on the bucket, ReadOnly
 * sessions only for a read-only mount (a session covers the whole bucket, so the prefix cannot narrow it).
 */
export function grantBucketMount(scope: IConstruct, grantee: iam.IGrantable, m: BucketMountGrant): void {
  const write = m.access === 'read-write';
  if (m.bucket.encryptionKey) {
    if (write) m.bucket.encryptionKey.grantEncryptDecrypt(grantee);
    else m.bucket.encryptionKey.grantDecrypt(grantee);
  }
  if (DIRECTORY_BUCKET_NAME_PATTERN.test(m.bucket.bucketName)) {
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['s3express:CreateSession'],
      resourceArns: [
        Stack.of(scope).formatArn({
          service: 's3express',
          account: m.bucket.env.account,
          resource: 'bucket',
          resourceName: m.bucket.bucketName,
        }),
      ],
      conditions: write ? undefined : { StringEquals: { 's3express:SessionMode': 'ReadOnly' } },
    });
    return;
  }
  const objects = m.bucket.arnForObjects(`${m.prefix}*`);
  acknowledgeWildcardResource(
    grantee,
    objects,
    `Mountpoint reads any object under the mounted prefix "${m.prefix}" of ${m.description}; the prefix is the narrowest unit a mount has.`,
  );
  iam.Grant.addToPrincipal({
    grantee,
    actions: ['s3:ListBucket'],
    resourceArns: [m.bucket.bucketArn],
    conditions: m.prefix ? { StringLike: { 's3:prefix': [m.prefix, `${m.prefix}*`] } } : undefined,
  });
  iam.Grant.addToPrincipal({
    grantee,
    actions: [
      's3:GetObject',
      ...(write ? ['s3:PutObject', 's3:AbortMultipartUpload'] : []),
      ...(mountReplacesObjects(m.access, m.dataset) ? ['s3:DeleteObject'] : []),
    ],
    resourceArns: [objects],
  });
}
