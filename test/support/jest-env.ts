import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every test runs offline with dummy credentials in us-east-1; nothing may reach real AWS. */
process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'testing';
process.env.AWS_SECRET_ACCESS_KEY = 'testing';
process.env.AWS_SESSION_TOKEN = 'testing';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
process.env.CDK_DISABLE_CLI_TELEMETRY = 'true';
delete process.env.AWS_PROFILE;
delete process.env.AWS_ENDPOINT_URL;
// Agent state (scratch-run records, mount directories) goes to a per-worker directory, never to /run.
process.env.MOUNTFLEET_RUN_DIR ??= join(tmpdir(), `mountfleet-test-run-${process.env.JEST_WORKER_ID ?? '1'}`);
// Agents started side by side (one per worker, several per test) each get a metrics relay port of their own.
process.env.MOUNTFLEET_METRICS_RELAY = 'http://127.0.0.1:0';
