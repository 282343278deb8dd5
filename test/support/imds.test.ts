import { MetadataService } from '@aws-sdk/ec2-metadata-service';
import { ImdsStandIn } from './imds';

describe('ImdsStandIn', () => {
  let imds: ImdsStandIn;

  beforeEach(async () => {
    imds = await ImdsStandIn.start({ instanceType: 'g5.xlarge', availabilityZoneId: 'use1-az6' });
  });
  afterEach(() => imds.stop());

  async function token(ttl = '60'): Promise<string> {
    const res = await fetch(`${imds.endpoint}/latest/api/token`, {
      method: 'PUT',
      headers: { 'x-aws-ec2-metadata-token-ttl-seconds': ttl },
    });
    expect(res.status).toBe(200);
    return res.text();
  }

  it('issues tokens only to a PUT with a valid TTL header', async () => {
    const put = (headers: Record<string, string>) =>
      fetch(`${imds.endpoint}/latest/api/token`, { method: 'PUT', headers }).then((r) => r.status);
    expect(await put({})).toBe(400);
    expect(await put({ 'x-aws-ec2-metadata-token-ttl-seconds': '0' })).toBe(400);
    expect(await put({ 'x-aws-ec2-metadata-token-ttl-seconds': '21601' })).toBe(400);
    expect((await fetch(`${imds.endpoint}/latest/api/token`)).status).toBe(405);
    expect(await token('21600')).toMatch(/^[\w-]{40,}$/);
  });

  it('answers reads only with a valid, unexpired token (IMDSv2 required)', async () => {
    const read = (headers: Record<string, string> = {}) =>
      fetch(`${imds.endpoint}/latest/meta-data/instance-id`, { headers });
    expect((await read()).status).toBe(401);
    expect((await read({ 'x-aws-ec2-metadata-token': 'forged' })).status).toBe(401);
    const valid = await token();
    const ok = await read({ 'x-aws-ec2-metadata-token': valid });
    expect([ok.status, await ok.text()]).toEqual([200, 'i-0123456789abcdef0']);
    imds.expireTokens();
    expect((await read({ 'x-aws-ec2-metadata-token': valid })).status).toBe(401);
  });

  it('lets a token lapse after its TTL', async () => {
    const shortLived = await token('1');
    await new Promise((r) => setTimeout(r, 1100));
    const res = await fetch(`${imds.endpoint}/latest/meta-data/instance-id`, {
      headers: { 'x-aws-ec2-metadata-token': shortLived },
    });
    expect(res.status).toBe(401);
  });

  it('serves instance metadata through the SDK MetadataService and AWS_EC2_METADATA_SERVICE_ENDPOINT', async () => {
    // jest-env.ts sets AWS_EC2_METADATA_DISABLED=true; MetadataService does not consult it, and this shows so.
    expect(process.env.AWS_EC2_METADATA_DISABLED).toBe('true');
    process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = imds.endpoint;
    try {
      const sdk = new MetadataService({ ec2MetadataV1Disabled: true, retries: 0 });
      const get = (path: string) => sdk.request(path, {});
      expect(await get('/latest/meta-data/instance-id')).toBe('i-0123456789abcdef0');
      expect(await get('/latest/meta-data/instance-type')).toBe('g5.xlarge');
      expect(await get('/latest/meta-data/placement/region')).toBe('us-east-1');
      expect(await get('/latest/meta-data/placement/availability-zone')).toBe('us-east-1a');
      expect(await get('/latest/meta-data/placement/availability-zone-id')).toBe('use1-az6');
      expect(JSON.parse(await get('/latest/dynamic/instance-identity/document'))).toMatchObject({
        instanceId: 'i-0123456789abcdef0',
        instanceType: 'g5.xlarge',
        region: 'us-east-1',
        availabilityZone: 'us-east-1a',
        accountId: '123456789012',
      });
      imds.set({ instanceType: 'c7gn.16xlarge' });
      expect(await get('/latest/meta-data/instance-type')).toBe('c7gn.16xlarge');
      // Every SDK read fetched its own token first.
      expect(imds.requests().filter((r) => r.path === '/latest/api/token')).toHaveLength(7);
    } finally {
      delete process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT;
    }
  });

  it('answers spot/instance-action with 404 until an interruption is scheduled', async () => {
    const sdk = new MetadataService({ endpoint: imds.endpoint, ec2MetadataV1Disabled: true, retries: 0 });
    const action = () => sdk.request('/latest/meta-data/spot/instance-action', {});
    await expect(action()).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
    imds.scheduleSpotInterruption({ action: 'terminate', time: new Date('2026-11-22T15:30:00.000Z') });
    expect(JSON.parse(await action())).toEqual({ action: 'terminate', time: '2026-11-22T15:30:00Z' });
    expect(await sdk.request('/latest/meta-data/spot/termination-time', {})).toBe('2026-11-22T15:30:00Z');
    imds.cancelSpotInterruption();
    await expect(action()).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
  });

  it('answers 404 for paths it does not serve', async () => {
    const res = await fetch(`${imds.endpoint}/latest/meta-data/iam/security-credentials/`, {
      headers: { 'x-aws-ec2-metadata-token': await token() },
    });
    expect(res.status).toBe(404);
  });

  it('delays answers on request, so callers can show their timeouts', async () => {
    imds.setDelay(2000);
    const sdk = new MetadataService({
      endpoint: imds.endpoint,
      ec2MetadataV1Disabled: true,
      retries: 0,
      httpOptions: { timeout: 200 },
    });
    const started = Date.now();
    await expect(sdk.request('/latest/meta-data/instance-id', {})).rejects.toThrow(/token/i);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
