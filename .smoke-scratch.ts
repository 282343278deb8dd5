import { spawnSync } from 'node:child_process';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EFSClient, DescribeFileSystemsCommand } from '@aws-sdk/client-efs';
import { createNetwork } from './test/support/fixtures';
import { ImdsStandIn } from './test/support/imds';
(async () => {
  const ep = 'http://127.0.0.1:5999';
  await fetch(ep + '/moto-api/reset', { method: 'POST' });
  const ec2 = new EC2Client({ region: 'us-east-1', endpoint: ep });
  const net = await createNetwork(ec2, 2);
  const imds = await ImdsStandIn.start({ availabilityZone: net.subnets[0].availabilityZone, availabilityZoneId: net.subnets[0].availabilityZoneId });
  const env = { ...process.env, AWS_ENDPOINT_URL: ep, AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.endpoint, MOUNTFLEET_EFS_MOUNT_HELPER: __dirname + '/test/support/efs-mount-helper-standin/mount.efs-standin', MOUNTFLEET_STANDIN_MOUNT_LOG: '/tmp/sti/log2' };
  const t = Date.now();
  const r = await new Promise<any>((res) => { const c = require('node:child_process').spawn('node', ['dist/agent/mountfleet.js', 'scratch', 'run', '--fleet', 'f1', '--subnet', net.subnets[0].subnetId, '--security-group', net.securityGroupId, '--path', '/tmp/sti/scratch', '--', 'sh', '-c', 'echo hi > $MOUNTFLEET_SCRATCH/x; grep sti /proc/self/mountinfo; exit 3'], { env, stdio: ['ignore','inherit','pipe'] }); c.stderr.on('data', (d: any) => process.stdout.write(String(Date.now()-t).padStart(6) + ' ' + d)); c.on('exit', (code: any) => res(code)); });
  console.log('exit', r, Date.now() - t, 'ms');
  const efs = new EFSClient({ region: 'us-east-1', endpoint: ep });
  console.log((await efs.send(new DescribeFileSystemsCommand({}))).FileSystems?.length);
  await imds.stop();
})();
