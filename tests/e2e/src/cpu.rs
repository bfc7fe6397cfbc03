//! CPU time used by a process or a process group, from Linux's `/proc`:
//! what each side of a load run (the store's engine, the Spin instances)
//! asked of this machine's cores, for the bench's per-request accounts.

use std::path::Path;

/// CPU seconds (user and system) `pid` has used, its threads included
/// (0 if it is gone).
pub fn of_process(pid: u32) -> f64 {
    stat(&Path::new("/proc").join(pid.to_string()).join("stat")).map_or(0.0, |s| s.seconds)
}

/// CPU seconds the live processes of process group `group` have used.
pub fn of_group(group: u32) -> f64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    entries
        .flatten()
        .filter_map(|e| stat(&e.path().join("stat")))
        .filter(|s| s.group == group)
        .map(|s| s.seconds)
        .sum()
}

struct Stat {
    group: u32,
    seconds: f64,
}

/// The fields of `/proc/<pid>/stat` after the command's closing `)`:
/// state, ppid, pgrp, …, utime (the 12th), stime (the 13th), in ticks.
fn stat(path: &Path) -> Option<Stat> {
    let text = std::fs::read_to_string(path).ok()?;
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some(Stat {
        group: fields.get(2)?.parse().ok()?,
        seconds: (ticks(11)? + ticks(12)?) as f64 / per_second,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_process_is_charged_the_time_it_spins_and_its_group_with_it() {
        let me = std::process::id();
        let before = of_process(me);
        // Spin until the count moves by 0.1 s: it does, however loaded the
        // machine (a generous wall-clock deadline only stops a broken count).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut x = 0u64;
        while of_process(me) - before < 0.1 {
            assert!(std::time::Instant::now() < deadline, "no CPU time counted");
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
        // SAFETY: getpgrp reads this process's group.
        let group = unsafe { libc::getpgrp() } as u32;
        assert!(of_group(group) >= of_process(me) - 0.01);
        assert_eq!(of_process(u32::MAX), 0.0, "a process that is not there");
    }
}
