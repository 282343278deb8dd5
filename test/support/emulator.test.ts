import { CreateFileSystemCommand, DescribeFileSystemsCommand } from '@aws-sdk/client-efs';
import { efsClient } from '../../core/aws/clients';
import { useEmulator } from './emulator';

describe('useEmulator', () => {
  const emu = useEmulator();

  it('points core clients at this worker’s emulator', async () => {
    expect(process.env.AWS_ENDPOINT_URL).toBe(emu.endpoint);
    const efs = efsClient({ maxAttempts: 1 });
    await efs.send(new CreateFileSystemCommand({ CreationToken: 'state-from-first-test' }));
    expect((await efs.send(new DescribeFileSystemsCommand({}))).FileSystems).toHaveLength(1);
  });

  it('resets state between tests', async () => {
    const efs = efsClient({ maxAttempts: 1 });
    expect((await efs.send(new DescribeFileSystemsCommand({}))).FileSystems).toHaveLength(0);
  });
});
