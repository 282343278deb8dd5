import { CreateBucketCommand, PutObjectCommand, GetObjectCommand } from '@aws-sdk/client-s3';
process.env.AWS_ENDPOINT_URL='http://127.0.0.1:5391';
process.env.AWS_REGION='us-east-1'; process.env.AWS_ACCESS_KEY_ID='x'; process.env.AWS_SECRET_ACCESS_KEY='x';
import { benchS3Client } from '../core/bench/s3-clients';
(async () => {
  const b = 'bench--use1-az4--x-s3';
  const c = benchS3Client(b);
  await c.send(new CreateBucketCommand({ Bucket: b }));
  await c.send(new PutObjectCommand({ Bucket: b, Key: 'a/b.bin', Body: 'hello' }));
  const r = await c.send(new GetObjectCommand({ Bucket: b, Key: 'a/b.bin' })); console.log(await r.Body!.transformToString());
})();
