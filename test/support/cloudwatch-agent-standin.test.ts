/**
 * The CloudWatch agent stand-in's OTLP decoding, on a request encoded here field by field from the OTLP
 * protobuf definitions (opentelemetry-proto metrics/v1): the stand-in must read what Mountpoint sends.
 */
import { otlpToDatums } from './cloudwatch-agent-standin';
import { attr, dbl, fixed64, msg, request, str, TIME, u64, varint } from './otlp-encode';

test('sums (int and double points), gauges, histograms and exponential histograms become datums with the fleet dimension', () => {
  const sum = Buffer.concat([
    str(1, 's3.request_count'),
    msg(
      7,
      Buffer.concat([
        msg(
          1,
          Buffer.concat([
            attr('s3_request', 'GetObject'),
            u64(3, TIME),
            fixed64(6, (b) => b.writeBigInt64LE(42n)),
          ]),
        ),
        varint((2 << 3) | 0),
        varint(2),
      ]),
    ),
  ]);
  const gauge = Buffer.concat([
    str(1, 'process.memory_usage'),
    msg(5, msg(1, Buffer.concat([u64(3, TIME), dbl(4, 1.5e8)]))),
  ]);
  // Histogram data point: attributes 9, time 3, count 4, sum 5, bucket counts 6 (packed), min 11, max 12.
  const histogram = Buffer.concat([
    str(1, 's3.request_first_byte_latency_us'),
    msg(
      9,
      msg(
        1,
        Buffer.concat([
          msg(9, Buffer.concat([str(1, 'op'), msg(2, str(1, 'get'))])),
          u64(3, TIME),
          u64(4, 4n),
          dbl(5, 1000),
          msg(6, Buffer.from([0, 4])),
          dbl(11, 100),
          dbl(12, 400),
        ]),
      ),
    ),
  ]);
  // Exponential histogram data point: attributes 1, time 3, count 4, sum 5, scale 6, min 12, max 13.
  const exponential = Buffer.concat([
    str(1, 'fuse.request_latency'),
    msg(
      10,
      msg(
        1,
        Buffer.concat([
          msg(1, Buffer.concat([str(1, 'fuse_request'), msg(2, str(1, 'read'))])),
          u64(3, TIME),
          u64(4, 2n),
          dbl(5, 30),
          varint((6 << 3) | 0),
          varint(6),
          dbl(12, 10),
          dbl(13, 20),
        ]),
      ),
    ),
  ]);
  const datums = otlpToDatums(request(sum, gauge, histogram, exponential), 'asg-1');
  const fleet = { Name: 'AutoScalingGroupName', Value: 'asg-1' };
  expect(datums).toEqual([
    {
      MetricName: 's3.request_count',
      Value: 42,
      Timestamp: new Date(1_795_000_000_000),
      Dimensions: [{ Name: 's3_request', Value: 'GetObject' }, fleet],
    },
    {
      MetricName: 'process.memory_usage',
      Value: 1.5e8,
      Timestamp: new Date(1_795_000_000_000),
      Dimensions: [fleet],
    },
    {
      MetricName: 's3.request_first_byte_latency_us',
      StatisticValues: { SampleCount: 4, Sum: 1000, Minimum: 100, Maximum: 400 },
      Timestamp: new Date(1_795_000_000_000),
      Dimensions: [{ Name: 'op', Value: 'get' }, fleet],
    },
    {
      MetricName: 'fuse.request_latency',
      StatisticValues: { SampleCount: 2, Sum: 30, Minimum: 10, Maximum: 20 },
      Timestamp: new Date(1_795_000_000_000),
      Dimensions: [{ Name: 'fuse_request', Value: 'read' }, fleet],
    },
  ]);
});

test('a truncated request is an error, not a silent empty export', () => {
  expect(() => otlpToDatums(request(str(1, 'x')).subarray(0, 5), 'asg-1')).toThrow();
});
