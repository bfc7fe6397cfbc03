//! A delay line between Spin and DynamoDB Local: every byte reaches the
//! other side `one_way` later, in order, as over a network link (bytes that
//! arrive together leave together; nothing is serialized behind a wait).
//! DynamoDB Local answers in well under a millisecond of network time on
//! loopback, where real DynamoDB is a round trip away; with the line, each
//! key-value call costs a round trip of `2 × one_way` on top.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;

/// Listens on a free loopback port; forwards each connection to `target`
/// through the delay line. Returns `http://127.0.0.1:port`. The threads live
/// as long as the process.
pub fn start(target: &str, one_way: Duration) -> Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let address = listener.local_addr()?;
    let target = target.to_string();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&target) else {
                continue;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            for (from, to) in [
                (client.try_clone(), server.try_clone()),
                (server.try_clone(), client.try_clone()),
            ] {
                if let (Ok(from), Ok(to)) = (from, to) {
                    pipe(from, to, one_way);
                }
            }
        }
    });
    Ok(format!("http://{address}"))
}

/// One direction: a reader stamps each chunk with its arrival, a writer
/// sends it on at arrival + `one_way`.
fn pipe(mut from: TcpStream, mut to: TcpStream, one_way: Duration) {
    let (chunks, line) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buffer = vec![0; 64 * 1024];
        while let Ok(n) = from.read(&mut buffer) {
            if n == 0 || chunks.send((Instant::now(), buffer[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        for (arrived, bytes) in line {
            let due = arrived + one_way;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
