//! Mountpoint for Amazon S3 1.24.0's command line (`mount-s3 [OPTIONS] <BUCKET_NAME> <DIRECTORY>`):
//! the same flags, value syntax, defaults and conflicts, checked against
//! test/support/mount-s3-standin/cli-spec.ts. clap exits with status 2 on anything else.

use std::path::PathBuf;

use clap::{ArgAction, Parser, ValueEnum};
use mountpoint_s3_fs::fs::TimeToLive;
use mountpoint_s3_fs::s3::{Bucket, Prefix};

/// `--version` says which Mountpoint this stands for and that it is the project's harness.
const VERSION: &str = "1.24.0 (mountfleet test harness on mountpoint-s3-fs 0.11.0)";

#[derive(Parser, Debug)]
#[command(name = "mount-s3", bin_name = "mount-s3", version = VERSION, about = "Mount an S3 bucket (mountfleet test harness)")]
pub struct Args {
    /// Name of the bucket to mount
    #[arg(value_name = "BUCKET_NAME", value_parser = parse_bucket)]
    pub bucket: Bucket,

    /// Directory to mount the bucket at
    #[arg(value_name = "DIRECTORY")]
    pub mount_point: PathBuf,

    /// Prefix inside the bucket to mount, ending in '/'
    #[arg(long, value_name = "PREFIX", value_parser = parse_prefix)]
    pub prefix: Option<Prefix>,

    /// AWS Region of the bucket
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,

    /// S3 endpoint URL (also AWS_ENDPOINT_URL)
    #[arg(long, value_name = "ENDPOINT_URL")]
    pub endpoint_url: Option<String>,

    /// Force path-style addressing
    #[arg(long)]
    pub force_path_style: bool,

    /// Use S3 Transfer Acceleration
    #[arg(long)]
    pub transfer_acceleration: bool,

    /// Use dual-stack endpoints
    #[arg(long)]
    pub dual_stack: bool,

    /// Set the requester-pays header
    #[arg(long)]
    pub requester_pays: bool,

    /// Type of the bucket (inferred from its name when absent)
    #[arg(long, value_name = "BUCKET_TYPE")]
    pub bucket_type: Option<BucketType>,

    /// Do not sign requests
    #[arg(long)]
    pub no_sign_request: bool,

    /// Named AWS profile for credentials
    #[arg(long, value_name = "PROFILE")]
    pub profile: Option<String>,

    /// Mount read-only
    #[arg(long)]
    pub read_only: bool,

    /// Storage class for new objects
    #[arg(long, value_name = "STORAGE_CLASS")]
    pub storage_class: Option<String>,

    /// Allow deleting files
    #[arg(long)]
    pub allow_delete: bool,

    /// Allow overwriting files
    #[arg(long)]
    pub allow_overwrite: bool,

    /// Append to objects in place (directory buckets only)
    #[arg(long)]
    pub incremental_upload: bool,

    /// Unmount when the process exits
    #[arg(long)]
    pub auto_unmount: bool,

    /// Allow root to access the mount
    #[arg(long)]
    pub allow_root: bool,

    /// Allow other users, including root, to access the mount
    #[arg(long, conflicts_with = "allow_root")]
    pub allow_other: bool,

    /// Target network throughput in Gbps
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub maximum_throughput_gbps: Option<u64>,

    /// Number of FUSE worker threads
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_threads: u64,

    /// Memory target in MiB (default: 95% of total or cgroup memory)
    #[arg(long, value_name = "MiB", value_parser = clap::value_parser!(u64).range(512..))]
    pub memory_target: Option<u64>,

    /// Part size for GET and PUT in bytes
    #[arg(long, value_name = "SIZE", value_parser = clap::value_parser!(u64).range(1..))]
    pub part_size: Option<u64>,

    /// Part size for GET in bytes
    #[arg(long, value_name = "SIZE", conflicts_with = "part_size", value_parser = clap::value_parser!(u64).range(1..))]
    pub read_part_size: Option<u64>,

    /// Part size for multipart PUT in bytes
    #[arg(long, value_name = "SIZE", conflicts_with = "part_size", value_parser = clap::value_parser!(u64).range(1..))]
    pub write_part_size: Option<u64>,

    /// Owner of files
    #[arg(long, value_name = "UID", value_parser = clap::value_parser!(u32).range(1..))]
    pub uid: Option<u32>,

    /// Group of files
    #[arg(long, value_name = "GID", value_parser = clap::value_parser!(u32).range(1..))]
    pub gid: Option<u32>,

    /// Directory permissions (octal)
    #[arg(long, value_name = "DIR_MODE", value_parser = parse_perm_bits)]
    pub dir_mode: Option<u16>,

    /// File permissions (octal)
    #[arg(long, value_name = "FILE_MODE", value_parser = parse_perm_bits)]
    pub file_mode: Option<u16>,

    /// Stay in the foreground
    #[arg(short = 'f', long)]
    pub foreground: bool,

    /// Account id the buckets must belong to
    #[arg(long, value_name = "AWS_ACCOUNT_ID")]
    pub expected_bucket_owner: Option<String>,

    /// Write logs into this directory
    #[arg(short = 'l', long, value_name = "DIRECTORY")]
    pub log_directory: Option<PathBuf>,

    /// Log metrics (parsed only)
    #[arg(long)]
    pub log_metrics: bool,

    /// Debug logging
    #[arg(short = 'd', long)]
    pub debug: bool,

    /// Debug logging of the AWS Common Runtime
    #[arg(long)]
    pub debug_crt: bool,

    /// No logging at all
    #[arg(long, conflicts_with_all = ["log_directory", "debug", "debug_crt", "log_metrics"])]
    pub no_log: bool,

    /// Local data cache in this existing directory
    #[arg(long, value_name = "DIRECTORY")]
    pub cache: Option<PathBuf>,

    /// Metadata time to live
    #[arg(long, value_name = "SECONDS|indefinite|minimal", value_parser = parse_ttl)]
    pub metadata_ttl: Option<TimeToLive>,

    /// Negative metadata time to live
    #[arg(long, value_name = "SECONDS|indefinite|minimal", value_parser = parse_ttl)]
    pub negative_metadata_ttl: Option<TimeToLive>,

    /// Largest size of the local cache in MiB (0 caches metadata only)
    #[arg(long, value_name = "MiB", requires = "cache", value_parser = clap::value_parser!(u64))]
    pub max_cache_size: Option<u64>,

    /// Shared cache in this S3 Express One Zone bucket
    #[arg(long, value_name = "BUCKET", value_parser = parse_bucket)]
    pub cache_xz: Option<Bucket>,

    /// Prefix for the User-Agent header
    #[arg(long, value_name = "PREFIX")]
    pub user_agent_prefix: Option<String>,

    /// Server-side encryption for new objects
    #[arg(long, value_name = "SSE", value_parser = ["aws:kms", "aws:kms:dsse", "AES256"])]
    pub sse: Option<String>,

    /// KMS key ARN for SSE-KMS
    #[arg(long, value_name = "AWS_KMS_KEY_ARN", requires = "sse", value_parser = parse_kms_key_arn)]
    pub sse_kms_key_id: Option<String>,

    /// Checksum algorithm for uploads
    #[arg(long, value_name = "ALGORITHM", value_parser = ["crc32c", "off"])]
    pub upload_checksums: Option<String>,

    /// Network interface to use (repeatable)
    #[arg(long, value_name = "NETWORK_INTERFACE", action = ArgAction::Append)]
    pub bind: Option<Vec<String>>,

    /// OTLP/HTTP endpoint for metrics
    #[arg(long, value_name = "OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,

    /// Seconds between OTLP metric exports
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub otlp_export_interval: Option<u64>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum BucketType {
    GeneralPurpose,
    Directory,
}

fn parse_bucket(value: &str) -> Result<Bucket, String> {
    Bucket::new(value).map_err(|e| e.to_string())
}

fn parse_prefix(value: &str) -> Result<Prefix, String> {
    Prefix::new(value).map_err(|e| e.to_string())
}

fn parse_ttl(value: &str) -> Result<TimeToLive, String> {
    TimeToLive::new_from_str(value).map_err(|e| e.to_string())
}

fn parse_perm_bits(value: &str) -> Result<u16, String> {
    let bits =
        u16::from_str_radix(value, 8).map_err(|_| "must be a valid octal number".to_string())?;
    if bits > 0o777 {
        return Err("only user/group/other permissions are supported".to_string());
    }
    Ok(bits)
}

fn parse_kms_key_arn(value: &str) -> Result<String, String> {
    if value.starts_with("arn:") && value.contains(":key") {
        Ok(value.to_string())
    } else {
        Err(
            "KMS Key ARN is only accepted as a key identifier, Key Alias ARN is not accepted"
                .to_string(),
        )
    }
}
