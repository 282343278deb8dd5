import { S3Client, CreateBucketCommand, PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
import { clientConfig } from '/work/main/core/aws';
process.env.AWS_ENDPOINT_URL='http://127.0.0.1:5391';
process.env.AWS_REGION='us-east-1'; process.env.AWS_ACCESS_KEY_ID='x'; process.env.AWS_SECRET_ACCESS_KEY='x';
const c = new S3Client({ ...clientConfig({maxAttempts:1}), forcePathStyle: true, disableS3ExpressSessionAuth: true });
c.middlewareStack.add((next) => async (args: any) => { console.log('path', args.request.path, args.request.hostname); return next(args); }, { step: 'finalizeRequest', name: 'log' });
(async () => {
  const b = 'bench--use1-az4--x-s3';
  try { await c.send(new CreateBucketCommand({ Bucket: b })); } catch (e: any) { console.log('create', e.name, e.message); }
  try { await c.send(new PutObjectCommand({ Bucket: b, Key: 'a/b.bin', Body: 'hello' })); } catch (e: any) { console.log('put', e.name, e.message); }
  try { const r = await c.send(new GetObjectCommand({ Bucket: b, Key: 'a/b.bin' })); console.log(await r.Body!.transformToString()); } catch (e: any) { console.log('get', e.name, e.message); }
})();
