import { MotoServer } from '../test/support/moto';

/**
 * The S3 endpoint to measure against: AWS_ENDPOINT_URL when set (gofakes3, any S3-compatible server),
 * otherwise a moto server from the project's .venv started for this run and stopped afterwards.
 */
export async function withS3Endpoint<T>(body: (endpoint: string) => Promise<T>): Promise<T> {
  if (process.env.AWS_ENDPOINT_URL) return body(process.env.AWS_ENDPOINT_URL);
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'bench';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'bench';
  const moto = await MotoServer.start();
  process.env.AWS_ENDPOINT_URL = moto.endpoint;
  try {
    return await body(moto.endpoint);
  } finally {
    delete process.env.AWS_ENDPOINT_URL;
    await moto.stop();
  }
}
