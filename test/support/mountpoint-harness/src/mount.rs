//! Turns the parsed command line into the crate's configuration and starts the FUSE session, the way
//! Mountpoint 1.24 applies each flag (doc/CONFIGURATION.md).

use std::time::Duration;

use anyhow::{Context, Result};
use mountpoint_s3_client::config::{
    AddressingStyle, Allocator, EndpointConfig, S3ClientAuthConfig, Uri,
};
use mountpoint_s3_client::instance_info::InstanceInfo;
use mountpoint_s3_client::user_agent::UserAgent;
use mountpoint_s3_fs::data_cache::{
    CacheLimit, DataCacheConfig, DiskDataCacheConfig, ExpressDataCacheConfig, ManagedCacheDir,
};
use mountpoint_s3_fs::fs::{CacheConfig, TimeToLive, UploadChecksumAlgorithm};
use mountpoint_s3_fs::fuse::config::{FuseOptions, FuseSessionConfig, MountPoint};
use mountpoint_s3_fs::fuse::session::FuseSession;
use mountpoint_s3_fs::logging::{self, LoggingConfig, LoggingHandle};
use mountpoint_s3_fs::memory::{effective_total_memory, CandidateSize, PagedPool};
use mountpoint_s3_fs::metrics::{self, MetricsConfig, MetricsSinkHandle, OtlpConfig};
use mountpoint_s3_fs::s3::config::{
    ClientConfig, MemoryLimitSetting, PartConfig, Region, TargetThroughputSetting,
};
use mountpoint_s3_fs::s3::{Prefix, S3Path, S3Personality};
use mountpoint_s3_fs::{
    autoconfigure, MountpointConfig, Runtime, S3FilesystemConfig, ServerSideEncryption,
};
use mountpoint_s3_fs::{Superblock, SuperblockConfig};

use crate::cli::{Args, BucketType};

/// Both caches store 1 MiB blocks, and the shared cache skips objects larger than one block.
const CACHE_BLOCK_SIZE: u64 = 1024 * 1024;
const DEFAULT_PART_SIZE: u64 = 8 * 1024 * 1024;
/// Metadata TTL when a data cache is configured and `--metadata-ttl` is not.
const CACHED_METADATA_TTL: Duration = Duration::from_secs(60);
const MIB: u64 = 1024 * 1024;

/// What must outlive the session: dropping them flushes logs and metrics.
pub struct Running {
    pub session: FuseSession,
    _logging: LoggingHandle,
    _metrics: MetricsSinkHandle,
}

/// Sets up logging and metrics (once per process) and mounts; returns once the mount is in place.
pub fn mount(args: Args) -> Result<Running> {
    let logging =
        logging::init_logging(logging_config(&args)).context("failed to initialize logging")?;
    let metrics =
        metrics::install(metrics_config(&args)).context("failed to initialize metrics")?;

    let s3_path = S3Path::new(
        args.bucket.clone(),
        args.prefix.clone().unwrap_or_else(Prefix::empty),
    );
    let region = autoconfigure::get_region(&InstanceInfo::new(), args.region.clone());
    let endpoint_url = args
        .endpoint_url
        .clone()
        .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok());
    let personality = personality(&args, &region, endpoint_url.as_deref())?;

    let memory_limit = match args.memory_target {
        Some(mib) => MemoryLimitSetting::User((mib * MIB) as usize),
        None => MemoryLimitSetting::Default((effective_total_memory() as f64 * 0.95) as usize),
    };
    let part = |size: Option<u64>| size.or(args.part_size).unwrap_or(DEFAULT_PART_SIZE) as usize;
    let part_config =
        PartConfig::with_read_write_sizes(part(args.read_part_size), part(args.write_part_size))
            .validate(memory_limit)?;
    // `--cache` (even with `--max-cache-size 0`) and `--cache-xz` turn on metadata caching by default.
    let caching = args.cache.is_some() || args.cache_xz.is_some();
    let mut candidate_sizes = vec![
        CandidateSize::prunable(part_config.read_size_bytes),
        CandidateSize::new(part_config.write_size_bytes),
    ];
    if caching {
        // Cache blocks come from the same pool; without their own size class each 1 MiB block would
        // take a part-sized buffer.
        candidate_sizes.push(CandidateSize::prunable(CACHE_BLOCK_SIZE as usize));
    }
    let pool = PagedPool::config()
        .with_candidate_sizes(candidate_sizes)
        .with_memory_limit(memory_limit.bytes())
        .build();

    let client = client_config(&args, region, endpoint_url, part_config)
        .create_client(pool.clone(), Some(&s3_path))
        .context("Failed to create S3 client")?;
    let runtime = Runtime::new(client.event_loop_group());

    let cache_config = metadata_cache_config(&args, caching);
    let fs_config = filesystem_config(&args, cache_config.clone(), personality);
    let fuse_config = FuseSessionConfig::new(
        MountPoint::new(&args.mount_point)?,
        FuseOptions {
            read_only: args.read_only,
            auto_unmount: args.auto_unmount,
            allow_root: args.allow_root,
            allow_other: args.allow_other,
            clone_fd: false,
        },
        args.max_threads as usize,
    )?;

    let mut data_cache_config = data_cache_config(&args);
    // Mountpoint owns `<DIR>/mountpoint-cache`: wiped at mount and removed when the session closes.
    let managed_cache_dir = match &mut data_cache_config.disk_cache_config {
        Some(disk) => {
            let dir =
                ManagedCacheDir::new_from_parent_with_cache_key(&disk.cache_directory, None, true)
                    .context("failed to create cache directory")?;
            disk.cache_directory = dir.as_path_buf();
            Some(dir)
        }
        None => None,
    };

    let superblock = Superblock::new(
        client.clone(),
        s3_path,
        SuperblockConfig {
            cache_config,
            s3_personality: personality,
        },
    );
    let mut session = MountpointConfig::new(fuse_config, fs_config, data_cache_config)?
        .create_fuse_session(superblock, client, runtime, pool)
        .context("Failed to create FUSE session")?;
    if let Some(dir) = managed_cache_dir {
        session.run_on_close(Box::new(move || drop(dir)));
    }
    Ok(Running {
        session,
        _logging: logging,
        _metrics: metrics,
    })
}

/// `--bucket-type`, else what the endpoint rules say about the bucket's name (`--x-s3`: Express).
fn personality(args: &Args, region: &Region, endpoint_url: Option<&str>) -> Result<S3Personality> {
    Ok(match args.bucket_type {
        Some(BucketType::Directory) => S3Personality::ExpressOneZone,
        Some(BucketType::GeneralPurpose) => S3Personality::Standard,
        None => {
            let mut endpoint =
                EndpointConfig::new(region.as_str()).addressing_style(addressing_style(args));
            if let Some(url) = endpoint_url {
                endpoint = endpoint.endpoint(
                    Uri::new_from_str(&Allocator::default(), url)
                        .context("Failed to parse endpoint URL")?,
                );
            }
            S3Personality::infer_from_bucket(args.bucket.as_str(), &endpoint)
        }
    })
}

fn addressing_style(args: &Args) -> AddressingStyle {
    if args.force_path_style {
        AddressingStyle::Path
    } else {
        AddressingStyle::Automatic
    }
}

fn client_config(
    args: &Args,
    region: Region,
    endpoint_url: Option<String>,
    part_config: PartConfig,
) -> ClientConfig {
    let mut user_agent = UserAgent::new(args.user_agent_prefix.clone());
    user_agent.key_value("mountfleet-test-harness", env!("CARGO_PKG_VERSION"));
    ClientConfig {
        region,
        endpoint_url,
        addressing_style: addressing_style(args),
        dual_stack: args.dual_stack,
        transfer_acceleration: args.transfer_acceleration,
        auth_config: if args.no_sign_request {
            S3ClientAuthConfig::NoSigning
        } else if let Some(profile) = &args.profile {
            S3ClientAuthConfig::Profile(profile.clone())
        } else {
            S3ClientAuthConfig::Default
        },
        requester_pays: args.requester_pays,
        expected_bucket_owner: args.expected_bucket_owner.clone(),
        throughput_target: throughput_target(args),
        bind: args.bind.clone(),
        part_config,
        user_agent,
        tls_config: None,
    }
}

/// `--metadata-ttl` (default 60 s with a data cache, else `minimal`) and `--negative-metadata-ttl`.
fn metadata_cache_config(args: &Args, caching: bool) -> CacheConfig {
    let ttl = args.metadata_ttl.unwrap_or(if caching {
        TimeToLive::Duration(CACHED_METADATA_TTL)
    } else {
        TimeToLive::Minimal
    });
    let config = CacheConfig::new(ttl);
    match args.negative_metadata_ttl {
        Some(negative) => config.with_negative_metadata_ttl(negative),
        None => config,
    }
}

fn filesystem_config(
    args: &Args,
    cache_config: CacheConfig,
    personality: S3Personality,
) -> S3FilesystemConfig {
    let defaults = S3FilesystemConfig::default();
    S3FilesystemConfig {
        cache_config,
        uid: args.uid.unwrap_or(defaults.uid),
        gid: args.gid.unwrap_or(defaults.gid),
        dir_mode: args.dir_mode.unwrap_or(defaults.dir_mode),
        file_mode: args.file_mode.unwrap_or(defaults.file_mode),
        allow_delete: args.allow_delete,
        allow_overwrite: args.allow_overwrite,
        incremental_upload: args.incremental_upload,
        storage_class: args.storage_class.clone(),
        s3_personality: personality,
        server_side_encryption: sse(args),
        upload_checksum_algorithm: match args.upload_checksums.as_deref() {
            Some("off") => None,
            _ => Some(UploadChecksumAlgorithm::Crc32c),
        },
        read_only: args.read_only,
        ..defaults
    }
}

fn sse(args: &Args) -> ServerSideEncryption {
    ServerSideEncryption::new(args.sse.clone(), args.sse_kms_key_id.clone())
}

fn metrics_config(args: &Args) -> Option<MetricsConfig> {
    let endpoint = args.otlp_endpoint.as_deref()?;
    let otlp = OtlpConfig::new(endpoint);
    Some(MetricsConfig::Otlp(match args.otlp_export_interval {
        Some(secs) => otlp.with_interval_secs(secs),
        None => otlp,
    }))
}

fn logging_config(args: &Args) -> LoggingConfig {
    let crt = if args.debug_crt {
        "awscrt=debug"
    } else {
        "awscrt=off"
    };
    let metrics = if args.log_metrics {
        ",mountpoint_s3_fs::metrics=info"
    } else {
        ""
    };
    let default_filter = if args.no_log {
        "off".to_string()
    } else if args.debug {
        format!("debug,{crt}{metrics}")
    } else {
        format!("warn,{crt}{metrics}")
    };
    LoggingConfig {
        log_file: args
            .log_directory
            .as_deref()
            .map(logging::prepare_log_file_name),
        log_to_stdout: args.foreground,
        default_filter,
    }
}

/// `--maximum-throughput-gbps`, else the instance type's network performance from IMDS, else 10.
fn throughput_target(args: &Args) -> TargetThroughputSetting {
    if let Some(gbps) = args.maximum_throughput_gbps {
        return TargetThroughputSetting::User { gbps: gbps as f64 };
    }
    match autoconfigure::network_throughput(&InstanceInfo::new()) {
        Ok(gbps) => TargetThroughputSetting::Instance { gbps },
        Err(_) => TargetThroughputSetting::Default,
    }
}

fn data_cache_config(args: &Args) -> DataCacheConfig {
    let disk_cache_config = match (&args.cache, args.max_cache_size) {
        // `--max-cache-size 0` keeps the metadata cache and caches no data.
        (Some(_), Some(0)) | (None, _) => None,
        (Some(dir), max_mib) => Some(DiskDataCacheConfig {
            cache_directory: dir.clone(),
            block_size: CACHE_BLOCK_SIZE,
            limit: match max_mib {
                Some(mib) => CacheLimit::TotalSize {
                    max_size: (mib * MIB) as usize,
                },
                None => CacheLimit::default(),
            },
        }),
    };
    let express_cache_config = args.cache_xz.as_ref().map(|bucket| {
        ExpressDataCacheConfig::new(bucket.as_str(), args.bucket.as_str()).sse(sse(args))
    });
    DataCacheConfig {
        disk_cache_config,
        express_cache_config,
    }
}
