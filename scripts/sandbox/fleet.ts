/**
 * The fleet the sandbox deployed, as its played instances see it: the instances the Auto Scaling group
 * launched (each in one of the group's zones) and agent.json from the user data.
 */
import { readFileSync } from 'node:fs';
import { DescribeAutoScalingGroupsCommand } from '@aws-sdk/client-auto-scaling';
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplateVersionsCommand,
} from '@aws-sdk/client-ec2';
import { autoScalingClient, ec2Client } from '../../core/aws/clients';
import { physicalIds } from '../../test/support/cloudformation-gaps-standin';

export interface FleetInstance {
  readonly instanceId: string;
  readonly instanceType: string;
  readonly availabilityZone: string;
  readonly availabilityZoneId: string;
  readonly launchTemplateId: string;
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export function stackOutputs(outputsFile: string, stack: string): Record<string, string> {
  const all = JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, Record<string, string>>;
  return all[stack];
}

/**
 * The subnet's AZ ID as the stack declared it (FleetNetwork's `Subnet-<azId>`): moto ignores
 * AvailabilityZoneId and puts every subnet in its first zone, so the declaration is the truth here.
 */
async function subnetZoneIds(stack: string, zoneIds: readonly string[]): Promise<Map<string, string>> {
  const bySubnet = new Map<string, string>();
  for (const [logical, physical] of await physicalIds(stack)) {
    const zone = zoneIds.find((z) => logical.includes(`Subnet${z.replace(/-/g, '')}`));
    if (zone && physical.startsWith('subnet-')) bySubnet.set(physical, zone);
  }
  return bySubnet;
}

/** The instances the deployed Auto Scaling group launched in the emulator, with their zone facts. */
export async function fleetInstances(
  stack: string,
  asgName: string,
  count: number,
  zoneIds: readonly string[],
): Promise<FleetInstance[]> {
  const asg = autoScalingClient();
  const group = await waitFor('the Auto Scaling group to launch instances', async () => {
    const g = (await asg.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [asgName] })))
      .AutoScalingGroups?.[0];
    return (g?.Instances?.length ?? 0) >= count ? g : undefined;
  });
  const ids = group.Instances!.slice(0, count).map((i) => i.InstanceId!);
  const ec2 = ec2Client();
  const reservations =
    (await ec2.send(new DescribeInstancesCommand({ InstanceIds: ids }))).Reservations ?? [];
  const described = reservations.flatMap((r) => r.Instances ?? []);
  const zones = (await ec2.send(new DescribeAvailabilityZonesCommand({}))).AvailabilityZones ?? [];
  const subnetZone = await subnetZoneIds(stack, zoneIds);
  // moto launches every instance into the group's first subnet; AWS balances them over its zones. Play
  // them balanced: instance n in the group's subnet n mod (number of subnets).
  const groupZones = (group.VPCZoneIdentifier ?? '').split(',').map((subnet) => {
    const zoneId = subnetZone.get(subnet);
    if (!zoneId) throw new Error(`the group's subnet ${subnet} is not one of the stack's`);
    return zoneId;
  });
  return described.map((i, n) => {
    const zoneId = groupZones[n % groupZones.length];
    const zone = zones.find((z) => z.ZoneId === zoneId);
    return {
      instanceId: i.InstanceId!,
      // moto leaves the type empty for mixed-instances groups: take the group's first override then.
      instanceType:
        i.InstanceType ||
        group.MixedInstancesPolicy?.LaunchTemplate?.Overrides?.[0]?.InstanceType ||
        'c6i.large',
      availabilityZone: zone?.ZoneName ?? i.Placement!.AvailabilityZone!,
      availabilityZoneId: zoneId,
      launchTemplateId:
        group.MixedInstancesPolicy?.LaunchTemplate?.LaunchTemplateSpecification?.LaunchTemplateId ??
        group.LaunchTemplate?.LaunchTemplateId ??
        '',
    };
  });
}

/** agent.json exactly as ComputeFleet's user data writes it on a real instance. */
export async function agentConfigFromUserData(launchTemplateId: string): Promise<AgentJson> {
  const versions = await ec2Client().send(
    new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: launchTemplateId, Versions: ['$Latest'] }),
  );
  const userData = shellOfUserData(
    Buffer.from(versions.LaunchTemplateVersions![0].LaunchTemplateData!.UserData!, 'base64').toString(),
  );
  const m = /cat > \/etc\/mountfleet\/agent\.json <<'MOUNTFLEET_EOF'\n([\s\S]*?)\nMOUNTFLEET_EOF/.exec(
    userData,
  );
  if (!m) throw new Error('no agent.json in the launch template user data');
  return JSON.parse(m[1]) as AgentJson;
}

/**
 * The shell script of user data: the text itself, or, for a MIME multipart document (a Batch fleet's: Batch takes
 * no other form), its parts' bodies, each decoded as its Content-Transfer-Encoding says.
 */
function shellOfUserData(text: string): string {
  const boundary = /^Content-Type: multipart\/mixed; boundary="([^"]+)"/m.exec(text)?.[1];
  if (!boundary) return text;
  return text
    .split(`--${boundary}`)
    .map((part) => {
      const [headers, ...body] = part.split('\n\n');
      const content = body.join('\n\n');
      return /Content-Transfer-Encoding: base64/i.test(headers)
        ? Buffer.from(content, 'base64').toString()
        : content;
    })
    .join('\n');
}

/** The parts of agent.json the sandbox reads (the agent validates the whole of it). */
export interface AgentJson {
  readonly fleetId: string;
  readonly mounts: { bucket: string; prefix?: string; path: string }[];
  readonly expressCache?: { buckets: Record<string, string> };
  readonly [key: string]: unknown;
}
