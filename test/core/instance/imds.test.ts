import { metadataService, readInstanceIdentity, readSpotInstanceAction } from '../../../core/instance/imds';
import { ImdsStandIn } from '../../support/imds';

describe('core/imds', () => {
  let imds: ImdsStandIn;

  beforeEach(async () => {
    imds = await ImdsStandIn.start({
      instanceId: 'i-0abc',
      instanceType: 'p5.48xlarge',
      region: 'us-west-2',
      availabilityZone: 'us-west-2b',
      availabilityZoneId: 'usw2-az1',
    });
    process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = imds.endpoint;
  });
  afterEach(async () => {
    delete process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT;
    await imds.stop();
  });

  it('reads the instance identity from AWS_EC2_METADATA_SERVICE_ENDPOINT', async () => {
    expect(await readInstanceIdentity()).toEqual({
      instanceId: 'i-0abc',
      instanceType: 'p5.48xlarge',
      region: 'us-west-2',
      availabilityZone: 'us-west-2b',
      availabilityZoneId: 'usw2-az1',
    });
    // IMDSv2: every read carried a token (the stand-in answers 401 otherwise), and both reads shared one.
    expect(imds.requests().map((r) => `${r.method} ${r.status}`)).toEqual(['PUT 200', 'GET 200', 'GET 200']);
  });

  it('reads no spot action until one is scheduled, then the action and its time', async () => {
    expect(await readSpotInstanceAction()).toBeUndefined();
    imds.scheduleSpotInterruption({ action: 'stop', time: '2026-11-22T15:30:00Z' });
    expect(await readSpotInstanceAction()).toEqual({
      action: 'stop',
      time: new Date('2026-11-22T15:30:00Z'),
    });
    // A 404 is an answer, not a failure: it was not retried.
    expect(imds.requests().filter((r) => r.status === 404)).toHaveLength(1);
  });

  it('gives up within its timeout when IMDS does not answer', async () => {
    imds.setDelay(5000);
    const started = Date.now();
    await expect(readInstanceIdentity(metadataService({ timeoutMs: 200, retries: 1 }))).rejects.toThrow();
    // Two tries of at most 200 ms each and a 100 ms backoff.
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('fails clearly on an identity document without the expected fields', async () => {
    imds.set({ instanceType: '' });
    await expect(readInstanceIdentity()).rejects.toThrow('instance identity document has no instanceType');
  });
});
