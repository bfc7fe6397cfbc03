//! A network line between Spin and DynamoDB Local, on loopback: every byte
//! reaches the other side `one_way` later, in order, as over a link (bytes
//! that arrive together leave together; nothing is serialized behind a
//! wait). DynamoDB Local answers in well under a millisecond of network
//! time, where real DynamoDB is a round trip away; with the line, each
//! key-value call costs a round trip of `2 × one_way` on top. The line can
//! be cut, as a network fails: every open connection is shut at once and new
//! ones are closed as soon as they arrive, until it is restored.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// A running line; its threads live as long as the process.
pub struct Line {
    address: String,
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    cut: AtomicBool,
    /// Connections refused while cut.
    refused: AtomicU64,
    /// Both ends of every connection carried, to shut on a cut.
    open: Mutex<Vec<TcpStream>>,
}

impl Line {
    /// Listens on a free loopback port and forwards each connection to
    /// `target` (`host:port`) through the line.
    pub fn start(target: &str, one_way: Duration) -> std::io::Result<Line> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let address = format!("http://{}", listener.local_addr()?);
        let state = Arc::new(State::default());
        let shared = state.clone();
        let target = target.to_string();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if shared.cut.load(Ordering::SeqCst) {
                    shared.refused.fetch_add(1, Ordering::SeqCst);
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                carry(&shared, client, server, one_way);
            }
        });
        Ok(Line { address, state })
    }

    /// `http://127.0.0.1:port`, for `AWS_ENDPOINT_URL`.
    pub fn endpoint(&self) -> &str {
        &self.address
    }

    /// Cuts the line: open connections are shut, new ones refused.
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
        let open = std::mem::take(&mut *self.state.open.lock().expect("the line's connections"));
        for stream in open {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// How many connections the line refused while it was cut: the store's
    /// callers felt the cut.
    pub fn refused(&self) -> u64 {
        self.state.refused.load(Ordering::SeqCst)
    }

    /// Carries new connections again.
    pub fn restore(&self) {
        self.state.cut.store(false, Ordering::SeqCst);
    }
}

fn carry(state: &State, client: TcpStream, server: TcpStream, one_way: Duration) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    if let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) {
        let mut open = state.open.lock().expect("the line's connections");
        open.retain(|stream| stream.peer_addr().is_ok());
        open.extend([c, s]);
    }
    for (from, to) in [
        (client.try_clone(), server.try_clone()),
        (server.try_clone(), client.try_clone()),
    ] {
        if let (Ok(from), Ok(to)) = (from, to) {
            pipe(from, to, one_way);
        }
    }
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
