/**
 * A directory bucket named by the config is referred to by that name and a formatted ARN, never by Ref or
 * GetAtt: the same on AWS (the Ref is the name), and the emulator, which skips the resource type, can
 * then deploy everything that uses the cache (a Ref to a skipped resource is '', a GetAtt fails the stack).
 */
import { Template } from 'aws-cdk-lib/assertions';
import { buildFleet } from './fleet-fixture';
import { agentJsonOf } from './support';
import { ExpressCache } from '../../lib';

const AZS = ['use1-az4', 'use1-az6'];

function references(template: Template, logicalIds: string[]): string[] {
  const found: string[] = [];
  const walk = (v: unknown, at: string): void => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}.${i}`));
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        if (k === 'Ref' && logicalIds.includes(x as string)) found.push(`${at}: Ref ${String(x)}`);
        if (k === 'Fn::GetAtt' && logicalIds.includes((x as string[])[0]))
          found.push(`${at}: GetAtt ${String(x)}`);
        walk(x, `${at}.${k}`);
      }
  };
  walk(template.toJSON(), '');
  return found;
}

test('named directory buckets: no Ref or GetAtt on them; IAM and agent.json use the name', () => {
  const { stack } = buildFleet({
    props: (s) => ({
      expressCache: new ExpressCache(s, 'NamedCache', { azIds: AZS, bucketBaseName: 'ml-cache' }),
    }),
  });
  const template = Template.fromStack(stack);
  const named = Object.keys(template.findResources('AWS::S3Express::DirectoryBucket')).filter((id) =>
    id.startsWith('NamedCache'),
  );
  expect(named).toHaveLength(2);
  expect(references(template, named)).toEqual([]);
  expect((agentJsonOf(template).expressCache as { buckets: unknown }).buckets).toEqual({
    'use1-az4': 'ml-cache--use1-az4--x-s3',
    'use1-az6': 'ml-cache--use1-az6--x-s3',
  });
  // Instances boot only once their zone's bucket exists, as a Ref would have ordered it.
  const [group] = Object.values(template.findResources('AWS::AutoScaling::AutoScalingGroup'));
  expect(group.DependsOn).toEqual(expect.arrayContaining(named));
  expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).toContain(
    ':bucket/ml-cache--use1-az4--x-s3',
  );
});

test('unnamed directory buckets keep Ref and GetAtt (the name and ARN exist only once created)', () => {
  const { stack } = buildFleet();
  const template = Template.fromStack(stack);
  const unnamed = Object.keys(template.findResources('AWS::S3Express::DirectoryBucket'));
  expect(references(template, unnamed).some((r) => r.includes('GetAtt'))).toBe(true);
  expect(references(template, unnamed).some((r) => r.includes('Ref'))).toBe(true);
});
