//! The helper servers the tests start (a `redis-server`, AWS DynamoDB Local):
//! silent, and killed by the kernel when the thread that started them ends,
//! so that no run of the tests leaves one behind.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// Makes `command` start a silent helper bound to the calling thread.
pub fn silent_and_bound(command: &mut Command) -> &mut Command {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: prctl is async-signal-safe and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    command
}
