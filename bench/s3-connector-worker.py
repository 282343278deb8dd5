"""One DataLoader worker of the Amazon S3 Connector for PyTorch, as bench/training-scenarios.ts plays it.

Reads object keys, one per line, on stdin; for each, does what the connector's map-style dataset does per sample
(one get_object, read to its end) with one MountpointS3Client of this process (DataLoader workers are processes,
each with its own client), and answers the bytes read, one line per key ("!<message>" if it failed). The client's
endpoint, bucket and region come from the command line; credentials from the environment.
"""

import sys

from s3torchconnectorclient._mountpoint_s3_client import MountpointS3Client


def main() -> None:
    region, endpoint, bucket = sys.argv[1:4]
    client = MountpointS3Client(region, endpoint=endpoint, force_path_style=True)
    for line in sys.stdin:
        key = line.rstrip("\n")
        try:
            size = sum(len(chunk) for chunk in client.get_object(bucket, key))
            answer = str(size)
        except Exception as error:  # noqa: BLE001 - every failure is answered, named, to the bench
            answer = "!" + " ".join(f"{type(error).__name__}: {error}".split())
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
