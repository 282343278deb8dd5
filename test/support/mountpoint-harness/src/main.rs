//! mountfleet's test harness: Mountpoint for Amazon S3 1.24's `mount-s3` command line on the published
//! `mountpoint-s3-fs` crate, so the tests exercise the real file system against the emulator. Test code,
//! not product: instances run Amazon's own `mount-s3`.

mod cli;
mod mount;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::Parser;
use nix::fcntl::OFlag;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{dup2, fork, pipe2, setsid, ForkResult, Pid};

use cli::Args;

/// Mountpoint's background mode waits this long for the mount, then fails.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// What the mounting child writes on the pipe once the mount is in place.
const READY: &[u8] = b"ready";

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(error) = check_before_mount(&args) {
        eprintln!("Error: {error:#}");
        return ExitCode::FAILURE;
    }
    let result = if args.foreground {
        run_foreground(args)
    } else {
        run_background(args)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Checks that need no S3, done before forking so the error reaches the caller at once.
fn check_before_mount(args: &Args) -> Result<()> {
    if let Some(dir) = &args.cache {
        if !dir.is_dir() {
            bail!("cache directory {} does not exist (create it first: Mountpoint only creates mountpoint-cache inside it)", dir.display());
        }
    }
    Ok(())
}

/// Mounts and serves until unmounted (SIGINT/SIGTERM unmount; an external unmount ends the session).
fn run_foreground(args: Args) -> Result<()> {
    let running = mount::mount(args)?;
    running.session.join()
}

/// Forks before any thread exists: the child mounts and serves, the parent waits for its word on a
/// pipe (up to READY_TIMEOUT) and exits 0 once the mount is in place, or fails with the child's error.
fn run_background(args: Args) -> Result<()> {
    // Close-on-exec, so a helper the child starts (fusermount3) cannot hold the pipe open.
    let (read_end, write_end) = pipe2(OFlag::O_CLOEXEC)?;
    // SAFETY: the process is single-threaded here (nothing has started a thread before this point).
    match unsafe { fork() }? {
        ForkResult::Child => {
            drop(read_end);
            std::process::exit(child(args, write_end));
        }
        ForkResult::Parent { child } => {
            drop(write_end);
            wait_for_child(child, read_end)
        }
    }
}

fn child(args: Args, write_end: OwnedFd) -> i32 {
    let mut report = File::from(write_end);
    // Detach like a daemon: own session, and no hold on the caller's terminal or output pipes.
    let detached = setsid().map_err(anyhow::Error::from).and_then(|_| {
        let null = File::options().read(true).write(true).open("/dev/null")?;
        for fd in 0..=2 {
            dup2(null.as_raw_fd(), fd)?;
        }
        Ok(())
    });
    let running = match detached.and_then(|()| mount::mount(args)) {
        Ok(running) => running,
        Err(error) => {
            let _ = report.write_all(format!("{error:#}").as_bytes());
            // At once, without exit handlers: the client's threads may still be running.
            // SAFETY: _exit only ends the process.
            unsafe { libc::_exit(1) }
        }
    };
    let _ = report.write_all(READY);
    drop(report);
    match running.session.join() {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

fn wait_for_child(child: Pid, read_end: OwnedFd) -> Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut message = Vec::new();
    let mut pipe = File::from(read_end);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if !readable_within(&pipe, left)? {
            let _ = kill(child, Signal::SIGTERM);
            bail!(
                "timeout after {} seconds waiting for the mount process to be ready",
                READY_TIMEOUT.as_secs()
            );
        }
        let mut chunk = [0u8; 4096];
        let n = pipe.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        message.extend_from_slice(&chunk[..n]);
    }
    if message == READY {
        return Ok(());
    }
    if !message.is_empty() {
        // The child exits right after reporting; reap it so nothing of this mount outlives the command.
        let _ = waitpid(child, None);
        bail!("{}", String::from_utf8_lossy(&message));
    }
    // The pipe closed without a word: the child is gone or going.
    match waitpid(child, None)? {
        WaitStatus::Signaled(_, signal, _) => {
            bail!("mount process was killed by {signal} before the mount was ready")
        }
        other => bail!("mount process ended before the mount was ready ({other:?})"),
    }
}

/// Waits until `file` is readable (data or end of file), or `timeout` passes.
fn readable_within(file: &File, timeout: Duration) -> Result<bool> {
    let mut fd = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    loop {
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut fd, 1, millis) };
        if ready >= 0 {
            return Ok(ready > 0);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error.into());
        }
    }
}
