/**
 * Shared by the bench scripts: an S3 endpoint to measure against. With AWS_ENDPOINT_URL set (gofakes3,
 * a real endpoint) it is used as is; otherwise a local moto server from the project's .venv is started
 * for the run and stopped afterwards.
 */
import { MotoServer } from '../test/support/moto';

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
