//! The load: keep-alive HTTP/1.1 clients that alternate, request by
//! request, between ours and the floor's, so both sides of a comparison are
//! measured under the very same conditions (a drift of the machine touches
//! both alike, which separate runs cannot promise on a shared 2-core VM).
//! Each of `connections` clients holds one connection to each side and
//! times every exchange; the first requests of each are a warm-up.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// A request, as bytes on the wire; `fresh` makes a new one for each send
/// (a new `Idempotency-Key`, say).
pub struct Request {
    pub fixed: Vec<u8>,
    pub fresh: Option<Box<dyn Fn(u64) -> Vec<u8> + Send + Sync>>,
    /// The status every answer must have.
    pub expect: u16,
}

impl Request {
    fn bytes(&self, n: u64) -> std::borrow::Cow<'_, [u8]> {
        match &self.fresh {
            Some(make) => make(n).into(),
            None => self.fixed.as_slice().into(),
        }
    }
}

/// The bytes of an HTTP/1.1 request to 127.0.0.1.
pub fn raw(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut text = format!("{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        text.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text.into_bytes()
}

pub struct Connection {
    reader: BufReader<TcpStream>,
}

impl Connection {
    pub fn open(addr: &str) -> Result<Connection> {
        let stream = TcpStream::connect(addr).with_context(|| format!("connecting to {addr}"))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Connection {
            reader: BufReader::new(stream),
        })
    }

    /// Sends one request and reads its whole answer; the status.
    pub fn exchange(&mut self, request: &[u8]) -> Result<u16> {
        self.reader.get_mut().write_all(request)?;
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .with_context(|| format!("a status line: {line:?}"))?;
        let mut length = 0;
        loop {
            line.clear();
            self.reader.read_line(&mut line)?;
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse()?;
                }
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        Ok(status)
    }
}

/// Latencies of one side, in milliseconds, sorted.
pub struct Latencies(Vec<f64>);

impl Latencies {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn percentile(&self, p: f64) -> f64 {
        let i = ((self.0.len() as f64 - 1.0) * p).round() as usize;
        self.0[i]
    }

    /// Requests per second of this side alone: connections ÷ mean latency.
    pub fn rate(&self, connections: usize) -> f64 {
        let mean = self.0.iter().sum::<f64>() / self.0.len() as f64;
        connections as f64 * 1000.0 / mean
    }
}

const WARM_UP: u64 = 20;

/// `connections` clients, each alternating `a` (sent to `addrs[0]`) and `b`
/// (to `addrs[1]`; the same address for ours beside the floor, two for two
/// deployments), in turn `a` first, then `b` first, for `seconds`; the
/// latencies of each side.
pub fn alternate(
    addrs: [&str; 2],
    a: &Request,
    b: &Request,
    connections: usize,
    seconds: f64,
) -> Result<(Latencies, Latencies)> {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let results: Vec<Result<(Vec<f64>, Vec<f64>)>> = std::thread::scope(|scope| {
        let clients: Vec<_> = (0..connections)
            .map(|client| {
                scope.spawn(move || -> Result<(Vec<f64>, Vec<f64>)> {
                    let mut sides = [Connection::open(addrs[0])?, Connection::open(addrs[1])?];
                    let requests = [a, b];
                    let mut times = [Vec::new(), Vec::new()];
                    let mut n = 0u64;
                    while Instant::now() < deadline {
                        let order = if n.is_multiple_of(2) { [0, 1] } else { [1, 0] };
                        for side in order {
                            // Each side its own numbers: two deployments of
                            // one store must not send each other's keys.
                            let unique = (n * connections as u64 + client as u64) * 2 + side as u64;
                            let bytes = requests[side].bytes(unique);
                            let started = Instant::now();
                            let status = sides[side].exchange(&bytes)?;
                            let took = started.elapsed().as_secs_f64() * 1000.0;
                            if status != requests[side].expect {
                                bail!("side {side}: status {status}");
                            }
                            if n >= WARM_UP {
                                times[side].push(took);
                            }
                        }
                        n += 1;
                    }
                    let [x, y] = times;
                    Ok((x, y))
                })
            })
            .collect();
        clients
            .into_iter()
            .map(|c| {
                c.join()
                    .unwrap_or_else(|_| bail!("a client thread panicked"))
            })
            .collect()
    });
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for r in results {
        let (x, y) = r?;
        xs.extend(x);
        ys.extend(y);
    }
    if xs.is_empty() || ys.is_empty() {
        bail!("no request completed after the warm-up");
    }
    xs.sort_by(f64::total_cmp);
    ys.sort_by(f64::total_cmp);
    Ok((Latencies(xs), Latencies(ys)))
}

/// What `clients` clients got from one side in a closed loop.
pub struct Run {
    /// Latencies of the answers with the expected status.
    pub ok: Latencies,
    /// Answers with another status.
    pub failed: usize,
    /// Expected answers that arrived within the window: a rate counts
    /// these, as wrk does, so the requests still in flight when it closes
    /// (up to one a client; at 64 clients the slowest take seconds)
    /// neither add to it nor stretch its time.
    pub within: usize,
    /// The window, in seconds.
    pub seconds: f64,
}

impl Run {
    /// Several runs as one: their answers pooled, their windows added.
    pub fn merge(runs: Vec<Run>) -> Run {
        let mut times: Vec<f64> = Vec::new();
        let (mut failed, mut within, mut seconds) = (0, 0, 0.0);
        for run in runs {
            times.extend(run.ok.0);
            failed += run.failed;
            within += run.within;
            seconds += run.seconds;
        }
        times.sort_by(f64::total_cmp);
        Run {
            ok: Latencies(times),
            failed,
            within,
            seconds,
        }
    }

    /// Expected answers per second of the window.
    pub fn throughput(&self) -> f64 {
        self.within as f64 / self.seconds
    }
}

/// `clients` clients, each on its own keep-alive connection, sending
/// `request` to `addr` back to back for `seconds`; every answer counted.
pub fn closed(addr: &str, request: &Request, clients: usize, seconds: f64) -> Result<Run> {
    closed_over(&[addr.to_string()], request, clients, seconds)
}

/// The same over several deployments of one store: client `i` on
/// `addrs[i % addrs.len()]`.
pub fn closed_over(
    addrs: &[String],
    request: &Request,
    clients: usize,
    seconds: f64,
) -> Result<Run> {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let results: Vec<Result<(Vec<f64>, usize, usize)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|client| {
                let addr = addrs[client % addrs.len()].as_str();
                scope.spawn(move || -> Result<(Vec<f64>, usize, usize)> {
                    let mut connection = Connection::open(addr)?;
                    let (mut times, mut failed, mut within, mut n) = (Vec::new(), 0, 0, 0u64);
                    while Instant::now() < deadline {
                        let bytes = request.bytes(n * clients as u64 + client as u64);
                        let sent = Instant::now();
                        let status = connection.exchange(&bytes)?;
                        let done = Instant::now();
                        let took = (done - sent).as_secs_f64() * 1000.0;
                        if status == request.expect {
                            times.push(took);
                            within += usize::from(done <= deadline);
                        } else {
                            failed += 1;
                        }
                        n += 1;
                    }
                    Ok((times, failed, within))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| bail!("a client thread panicked"))
            })
            .collect()
    });
    let (mut times, mut failed, mut within) = (Vec::new(), 0, 0);
    for r in results {
        let (t, f, w) = r?;
        times.extend(t);
        failed += f;
        within += w;
    }
    if times.is_empty() {
        bail!("no expected answer ({failed} others)");
    }
    times.sort_by(f64::total_cmp);
    Ok(Run {
        ok: Latencies(times),
        failed,
        within,
        seconds,
    })
}
